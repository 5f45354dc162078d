import type { StreamClient } from "./api.js";

/** What goes over the stream between two participants (the `payload` of a signal frame). */
type Signal =
  | { kind: "offer"; sdp: string }
  | { kind: "answer"; sdp: string }
  | { kind: "candidate"; candidate: RTCIceCandidateInit };

interface Peer {
  connection: RTCPeerConnection;
  channel: RTCDataChannel | undefined;
  /** Candidates that arrived before the remote description. */
  early: RTCIceCandidateInit[];
}

export interface CallEvents {
  onStatus(username: string, status: string): void;
  onMessage(from: string, text: string): void;
}

/**
 * A peer-to-peer call in one room: one RTCPeerConnection per other participant, each with a data
 * channel ("chat"). Parley only relays the signalling; whoever joins later sends the offers.
 */
export class Call {
  private readonly peers = new Map<string, Peer>();
  private readonly offSignal: () => void;

  constructor(
    readonly roomId: number,
    private readonly stream: StreamClient,
    private readonly iceServers: RTCIceServer[],
    private readonly events: CallEvents,
  ) {
    this.offSignal = stream.on("signal", (frame) => {
      if (frame.roomId === this.roomId) void this.onSignal(frame.from, frame.payload as Signal);
    });
  }

  /** Offers a connection to each participant who was there before us. */
  async connectTo(usernames: string[]): Promise<void> {
    for (const username of usernames) {
      const peer = this.peer(username);
      peer.channel = peer.connection.createDataChannel("chat");
      this.watchChannel(username, peer.channel);
      const offer = await peer.connection.createOffer();
      await peer.connection.setLocalDescription(offer);
      this.send(username, { kind: "offer", sdp: offer.sdp ?? "" });
    }
  }

  /** Sends a text to every connected participant; answers how many got it. */
  say(text: string): number {
    let sent = 0;
    for (const peer of this.peers.values()) {
      if (peer.channel?.readyState === "open") {
        peer.channel.send(text);
        sent++;
      }
    }
    return sent;
  }

  close(): void {
    this.offSignal();
    for (const peer of this.peers.values()) peer.connection.close();
    this.peers.clear();
  }

  private peer(username: string): Peer {
    let peer = this.peers.get(username);
    if (peer) return peer;
    const connection = new RTCPeerConnection({ iceServers: this.iceServers });
    peer = { connection, channel: undefined, early: [] };
    this.peers.set(username, peer);
    connection.onicecandidate = (event) => {
      if (event.candidate)
        this.send(username, { kind: "candidate", candidate: event.candidate.toJSON() });
    };
    connection.ondatachannel = (event) => {
      peer!.channel = event.channel;
      this.watchChannel(username, event.channel);
    };
    connection.onconnectionstatechange = () =>
      this.events.onStatus(username, connection.connectionState);
    return peer;
  }

  private watchChannel(username: string, channel: RTCDataChannel): void {
    channel.onopen = () => this.events.onStatus(username, "channel open");
    channel.onclose = () => this.events.onStatus(username, "channel closed");
    channel.onmessage = (event) => this.events.onMessage(username, String(event.data));
  }

  private send(to: string, signal: Signal): void {
    this.stream.signal(this.roomId, to, signal);
  }

  private async onSignal(from: string, signal: Signal): Promise<void> {
    const peer = this.peer(from);
    const { connection } = peer;
    if (signal.kind === "offer") {
      await connection.setRemoteDescription({ type: "offer", sdp: signal.sdp });
      const answer = await connection.createAnswer();
      await connection.setLocalDescription(answer);
      this.send(from, { kind: "answer", sdp: answer.sdp ?? "" });
    } else if (signal.kind === "answer") {
      await connection.setRemoteDescription({ type: "answer", sdp: signal.sdp });
    } else if (signal.kind === "candidate") {
      if (!connection.remoteDescription) {
        peer.early.push(signal.candidate);
        return;
      }
      await connection.addIceCandidate(signal.candidate);
      return;
    }
    for (const candidate of peer.early.splice(0)) await connection.addIceCandidate(candidate);
  }
}

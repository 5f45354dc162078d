/**
 * A text frame encoded once, WebSocket header included (RFC 6455 section 5.2: FIN, opcode 1,
 * unmasked as every server frame is), so that one event sent to thousands of sockets is written
 * as the same bytes to each instead of being encoded and framed once per socket.
 */
export interface PreparedFrame {
  readonly wire: Buffer;
  /** The payload's length in bytes (what the client will read). */
  readonly length: number;
}

export function prepareTextFrame(text: string): PreparedFrame {
  const payload = Buffer.from(text);
  const length = payload.length;
  const headerLength = length < 126 ? 2 : length < 65_536 ? 4 : 10;
  const wire = Buffer.allocUnsafe(headerLength + length);
  wire[0] = 0x81;
  if (length < 126) {
    wire[1] = length;
  } else if (length < 65_536) {
    wire[1] = 126;
    wire.writeUInt16BE(length, 2);
  } else {
    wire[1] = 127;
    wire.writeBigUInt64BE(BigInt(length), 2);
  }
  payload.copy(wire, headerLength);
  return { wire, length };
}

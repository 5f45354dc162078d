# receiver.py: PARLEY_WEBHOOK_SECRET=whsec_... PORT=9000 python3 receiver.py
import base64, hashlib, hmac, json, os, time
from http.server import BaseHTTPRequestHandler, HTTPServer

SECRETS = os.environ["PARLEY_WEBHOOK_SECRET"].split(",")  # [new, old] while rotating
TOLERANCE_SECONDS = 300

def key_of(secret):
    if secret.startswith("whsec_"):
        return base64.b64decode(secret[len("whsec_"):])
    return secret.encode("utf-8")

def verify(headers, body):
    msg_id = headers.get("webhook-id")
    timestamp = headers.get("webhook-timestamp")
    signatures = headers.get("webhook-signature")
    if not (msg_id and timestamp and signatures) or not timestamp.isdigit():
        return False
    if abs(time.time() - int(timestamp)) > TOLERANCE_SECONDS:
        return False  # too old or from the future: a replay
    signed = f"{msg_id}.{timestamp}.".encode() + body
    given = [s[3:] for s in signatures.split(" ") if s.startswith("v1,")]
    for secret in SECRETS:
        digest = hmac.new(key_of(secret), signed, hashlib.sha256).digest()
        expected = base64.b64encode(digest).decode()
        if any(hmac.compare_digest(expected, g) for g in given):
            return True
    return False

class Receiver(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        if not verify(self.headers, body):
            self.send_response(401)
            self.end_headers()
            return
        event = json.loads(body)
        self.send_response(204)
        self.end_headers()
        print(self.headers["webhook-id"], event["event"], flush=True)

    def log_message(self, *args):
        pass

HTTPServer(("127.0.0.1", int(os.environ.get("PORT", "9000"))), Receiver).serve_forever()
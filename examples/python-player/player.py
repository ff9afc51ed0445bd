#!/usr/bin/env python3
"""A league.v2 player in Python's standard library alone: see leaguectl's docs/agents.md."""
import argparse, json, os, random, signal, sys, threading, time, urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ap = argparse.ArgumentParser(description=__doc__)
ap.add_argument("--port", type=int, default=8201, help="port to serve on (0: a free one)")
ap.add_argument("--manager", required=True, help="the manager's endpoint, e.g. http://127.0.0.1:8000/mcp")
ap.add_argument("--id", default="pending", help="id to ask for (default: the manager picks one)")
ap.add_argument("--name", default="Python player", help="display name")
args = ap.parse_args()
me = {"id": args.id, "token": ""}  # filled in by the manager's answer to the registration
# The message each method carries; a method may be named by its message type too.
METHODS = {"handle_game_invitation": "GAME_INVITATION", "choose_parity": "CHOOSE_PARITY_CALL",
           "notify_match_result": "GAME_OVER", "notify_game_error": "GAME_ERROR",
           "notify_round": "ROUND_ANNOUNCEMENT", "update_standings": "LEAGUE_STANDINGS_UPDATE",
           "notify_round_completed": "ROUND_COMPLETED", "notify_league_completed": "LEAGUE_COMPLETED"}
METHODS.update({t: t for t in list(METHODS.values())})

def now(): return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())

def envelope(message_type, conversation_id):  # no auth_token: the player's token is for its manager only
    return {"protocol": "league.v2", "message_type": message_type, "sender": "player:" + me["id"],
            "timestamp": now(), "conversation_id": conversation_id}

def decide(kind, msg):  # the player's decisions: a strategy goes here
    if kind == "GAME_INVITATION": return "GAME_JOIN_ACK", {"arrival_timestamp": now(), "accept": True}
    return "CHOOSE_PARITY_RESPONSE", {"parity_choice": random.choice(["even", "odd"])}

def serve(req):  # one JSON-RPC request, and its response
    out, msg = {"jsonrpc": "2.0", "id": req.get("id")}, req.get("params") or {}
    kind = msg.get("message_type") or METHODS.get(req.get("method"))  # params.message_type decides
    if req.get("method") == "ping":
        out["result"] = {"status": "ok", "protocol": "league.v2", "sender": "player:" + me["id"], "timestamp": now()}
    elif kind not in METHODS: out["error"] = {"code": -32601, "message": "Method not found"}
    elif msg.get("protocol") != "league.v2":
        out["error"] = {"code": -32600, "message": "not league.v2", "data": {"error_code": "E011"}}
    elif kind in ("GAME_INVITATION", "CHOOSE_PARITY_CALL"):
        reply, fields = decide(kind, msg)
        out["result"] = dict(envelope(reply, msg.get("conversation_id")), match_id=msg["match_id"],
                             player_id=msg.get("player_id") or me["id"], **fields)
    else: out["result"] = {"status": "ACK"}  # a notification: GAME_OVER, the standings, …
    return out

class Handler(BaseHTTPRequestHandler):
    protocol_version, wbufsize = "HTTP/1.1", -1  # keep-alive; headers and body in one write
    def do_GET(self): self.reply({"status": "ok", "role": "player", "player_id": me["id"]})  # /health
    def do_POST(self):
        try: req = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        except ValueError: req = None
        if not isinstance(req, dict):  # not JSON, or a batch (this player takes one request at a time)
            code = -32700 if req is None else -32600
            return self.reply({"jsonrpc": "2.0", "error": {"code": code, "message": "bad request"}, "id": None})
        self.reply(serve(req))
    def reply(self, body):
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def log_message(self, *_): pass

def register(endpoint):  # retried until the manager answers: it may not be up yet
    meta = {"display_name": args.name, "protocol_version": "2.1.0", "agent_version": "1.0.0",
            "game_types": ["even_odd"], "contact_endpoint": endpoint}
    params = dict(envelope("LEAGUE_REGISTER_REQUEST", "conv-register"), player_meta=meta)
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "register_player", "params": params}).encode()
    while True:
        try: res = json.load(urllib.request.urlopen(urllib.request.Request(args.manager, body), timeout=10))
        except OSError as e:
            print("registration failed, retrying:", e, file=sys.stderr)
            time.sleep(1)
            continue
        result = res.get("result") or {}
        if result.get("status") != "ACCEPTED":
            print("registration refused:", res.get("error") or result, file=sys.stderr)
            os._exit(3)
        me.update(id=result["player_id"], token=result["auth_token"])
        return print("registered as", me["id"], file=sys.stderr)

server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
endpoint = "http://127.0.0.1:%d/mcp" % server.server_address[1]
print(endpoint, flush=True)  # the first line of stdout, as leaguectl's serve-* commands do
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
threading.Thread(target=register, args=(endpoint,), daemon=True).start()
try: server.serve_forever()
except KeyboardInterrupt: pass

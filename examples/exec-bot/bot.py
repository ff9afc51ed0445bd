#!/usr/bin/env python3
"""A leaguectl --exec bot: one league.v2 message a line in, one answer a line out."""
import json, random, sys

for line in sys.stdin:  # one message a line; the end of stdin is the end of the bot
    kind = json.loads(line)["message_type"]
    if kind == "GAME_INVITATION":
        answer = {"accept": True}
    elif kind == "CHOOSE_PARITY_CALL":
        answer = {"parity_choice": random.choice(["even", "odd"])}
    else:
        answer = {}  # a notification (GAME_OVER, standings, ...): any object acknowledges it
    print(json.dumps(answer), flush=True)  # one line, at once: stdout is for answers only

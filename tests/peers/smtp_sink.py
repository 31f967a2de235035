#!/usr/bin/env python3
"""A real SMTP server on loopback that keeps what it receives: the mail sink of the hosted tests.

    .venv/bin/python smtp_sink.py OUT_DIR [--fail-first N]

Listens on 127.0.0.1 on a free port and prints `listening <port>` once ready. Every accepted
message is written to OUT_DIR as `<n>.json`: `{ "from", "to": [...], "data", "subject", "body" }`
(data is the raw message as received; subject and body are decoded, transfer encoding undone). With `--fail-first N` the first N messages are answered
`451 try again later` (a temporary failure, which a sender must retry). Runs until killed.
"""

import argparse
import email
import email.policy
import json
import os
import signal
import socket
import sys

from aiosmtpd.controller import Controller


class Sink:
    def __init__(self, out_dir, fail_first):
        self.out_dir = out_dir
        self.fail_left = fail_first
        self.count = 0

    async def handle_DATA(self, server, session, envelope):
        if self.fail_left > 0:
            self.fail_left -= 1
            return "451 try again later"
        self.count += 1
        message = email.message_from_bytes(envelope.content, policy=email.policy.default)
        body = message.get_body(preferencelist=("plain",))
        record = {
            "from": envelope.mail_from,
            "to": list(envelope.rcpt_tos),
            "data": envelope.content.decode("utf-8", errors="replace"),
            "subject": str(message.get("subject", "")),
            "body": body.get_content() if body is not None else "",
        }
        tmp = os.path.join(self.out_dir, f".{self.count}.json.tmp")
        with open(tmp, "w") as f:
            json.dump(record, f)
        # Rename so a reader never sees half a file.
        os.rename(tmp, os.path.join(self.out_dir, f"{self.count}.json"))
        return "250 OK"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out_dir")
    parser.add_argument("--fail-first", type=int, default=0)
    args = parser.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    port = free_port()
    controller = Controller(Sink(args.out_dir, args.fail_first), hostname="127.0.0.1", port=port)
    controller.start()
    print(f"listening {port}", flush=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        signal.pause()
    finally:
        controller.stop()


if __name__ == "__main__":
    main()

"""Run papermill (same arguments) with one fix to the kernel client: it never waits forever on a
channel.

While a cell that builds an ipywidgets panel ran, the notebook client sometimes never woke up for
the kernel's `execute_reply`. We saw it in about one run in five of such a cell, two runs side by
side, with ipykernel 6.31 and 7.4 alike: the kernel was idle, the client had already received the
cell's `idle` status on IOPub, and it waited on the shell channel forever, in a `zmq.asyncio` poll
with no timeout. A poll with a timeout looks at the socket again when its timer fires, so waits
without a timeout are made in one-second slices here.
"""

from __future__ import annotations

import sys
from queue import Empty

from jupyter_client.channels import AsyncZMQSocketChannel

_get_msg = AsyncZMQSocketChannel.get_msg


async def _get_msg_in_slices(self, timeout: float | None = None):
    "Like AsyncZMQSocketChannel.get_msg, but a wait without a timeout polls once a second."
    if timeout is not None:
        return await _get_msg(self, timeout)
    while True:
        try:
            return await _get_msg(self, 1.0)
        except Empty:
            continue


AsyncZMQSocketChannel.get_msg = _get_msg_in_slices

if __name__ == "__main__":
    from papermill.cli import papermill

    sys.exit(papermill())

"""Where a small batch's trip through ``arrowmm.shm.Channel`` goes: a two-process profile.

Run from the repository root: ``python benchmarks/profile_channel.py [--n 2000]``.

The producer (this process) sends one-row int64 batches 0.5 ms apart and stamps
(CLOCK_MONOTONIC, shared by processes) before ``send``, after the batch is ready for its slot
(``_encode``) and after ``send`` returns; the consumer (a spawned process) stamps when its
cursor has the slot (``_cursor.take``), when the batch is decoded and when it has the value.
Prints the median of each stage in microseconds.
"""
from __future__ import annotations

import argparse
import multiprocessing
import statistics
import time

import numpy as np

import arrowmm
from arrowmm.shm import Channel


def now() -> int:
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def consumer(name, n, conn):
    c = Channel.attach(name)
    conn.send("ready")
    out = []
    for _ in range(n):
        while True:
            t_take0 = now()
            lease = c._cursor.take()
            if lease is not None:
                break
            time.sleep(0)  # (busy-ish wait: measures the decode, not the futex)
        t_take = now()
        batch = c._decode(lease, lease.sequence)
        t_dec = now()
        v = int(batch.column(0).to_numpy()[0])
        t_val = now()
        out.append((v, t_take0, t_take, t_dec, t_val))
        del batch, lease
    conn.send(out)
    c.close()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=2000)
    args = p.parse_args()
    ctx = multiprocessing.get_context("spawn")
    ch = Channel.create(None, arrowmm.schema([("t", arrowmm.int64())]), capacity=1 << 20, slots=8)
    a, b = ctx.Pipe()
    proc = ctx.Process(target=consumer, args=(ch.name, args.n, b))
    proc.start()
    assert a.recv() == "ready"
    stamp = np.zeros(1, dtype=np.int64)
    batch = arrowmm.record_batch({"t": stamp})
    prod = []
    for _ in range(args.n):
        time.sleep(0.0005)
        t0 = now()
        stamp[0] = t0
        ch._encode(batch, None)
        t1 = now()
        ch.send(batch, timeout=30)
        t2 = now()
        prod.append((t0, t1 - t0, t2 - t1))
    got = a.recv()
    proc.join(30)
    ch.close()
    med = lambda xs: statistics.median(xs) / 1000  # noqa: E731
    enc = med([p[1] for p in prod])
    send = med([p[2] for p in prod])
    take = med([g[2] - g[1] for g in got])
    dec = med([g[3] - g[2] for g in got])
    val = med([g[4] - g[3] for g in got])
    one_way = med([g[4] - g[0] for g in got])
    print(f"producer: prepare (_encode) {enc:.1f} us, whole send {send:.1f} us")
    print(f"consumer: take {take:.1f} us, decode {dec:.1f} us, value {val:.1f} us")
    print(f"one-way (stamp -> value, polling consumer) {one_way:.1f} us")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Helpers for tests/firmware/run.sh (host side; standard library only).

  fwtool.py header DATA NAME ... [--feedback PAIRS] > fw_models.h
      The rows of DATA (SVMlight, every feature listed) as dense f32, and the
      table of models: `fw_model_NAME[]` and `fw_model_NAME_len` are defined
      in C files made by `ranklet export --c-array fw_model_NAME`. Each value
      is rounded decimal -> f64 -> f32, exactly as `ranklet score` rounds it,
      and written as a hex float literal so the C compiler cannot round it
      differently. With --feedback, the pairs file (`winner loser
      [magnitude]`, 0-based rows) as `fw_feedback[]` for the online learner.
  fwtool.py c-array NAME MODEL.rkl > NAME.c
      The same C file as `ranklet export --c-array NAME` (`const uint8_t
      NAME[]`, 8-byte aligned, and `const size_t NAME_len`), for a ranklet
      without the export command.
  fwtool.py check FW_OUTPUT NAME=HOST_SCORES ... [online=STATE.rkl]
      Compares the firmware's scores (f32 bit patterns) with `ranklet score`
      on the host (relative 1e-6) and its rankings with a host-side sort;
      with online=STATE.rkl, the online learner's weights after the feedback
      with the state `ranklet online-update` wrote (relative 1e-4 in norm,
      room for f32 rounding over the answers; the two run the same f32 code, so they usually
      agree bit for bit) and its observation count. With pairs=HOST.host
      (lines `u row bits` from core/examples/pair_fixture.rs), the pair
      model's scores (`pscore bilinear u row bits`, relative 1e-6) and
      orders (`porder bilinear u ...`, a stable sort of the device's
      scores). With pref=HOST (lines `mean i v`, `cov k v`, `sigma v`,
      `count n` from core/examples/pref_fixture.rs: the f64 posterior after
      the same ADF updates), the device's preference-GP posterior
      (`pref mean|cov ...`, |device - host| <= 1e-4 * max(1, |host|)), its
      count, P(i > j) and v_ij recomputed from the host posterior (1e-4),
      its next pair (the host's ratio at that pair within 1e-3 relative of
      the host's best) and its order (non-increasing host means up to
      1e-4).
      Exit 0 when everything agrees, 1 otherwise (mismatches printed).
"""
import math
import struct
import sys


def bits32(h):
    return struct.unpack("<f", struct.pack("<I", int(h, 16)))[0]


def check_pref(dev, path, bad):
    """The device's preference-GP posterior against the host's f64 one."""
    host = {"mean": {}, "cov": {}}
    for line in open(path):
        t = line.split()
        if t and t[0] in ("mean", "cov"):
            host[t[0]][int(t[1])] = float(t[2])
        elif t and t[0] in ("sigma", "count"):
            host[t[0]] = float(t[1]) if t[0] == "sigma" else int(t[1])
    n = len(host["mean"])
    worst = 0.0
    for part in ("mean", "cov"):
        d = dev.get(part, {})
        if sorted(d) != sorted(host[part]):
            bad.append(f"pref: firmware printed {len(d)} {part} entries, the host has {len(host[part])}")
            return
        for k, h in host[part].items():
            e = abs(d[k] - h) / max(1.0, abs(h))
            worst = max(worst, e)
            if e > 1e-4:
                bad.append(f"pref: {part} {k}: firmware {d[k]!r} vs host {h!r} (scaled difference {e:.3g} > 1e-4)")
    if dev.get("count") != host["count"]:
        bad.append(f"pref: firmware count {dev.get('count')} != host {host['count']}")
    mu, c = host["mean"], host["cov"]
    cov = lambda i, j: c[max(i, j) * (max(i, j) + 1) // 2 + min(i, j)]
    v = lambda i, j: max(0.0, cov(i, i) + cov(j, j) - 2 * cov(i, j))
    s2 = 2 * host["sigma"] ** 2
    for i, j, p, var in dev.get("prob", []):
        hp = 0.5 * math.erfc(-(mu[i] - mu[j]) / math.sqrt(s2 + v(i, j)) / math.sqrt(2))
        if abs(p - hp) > 1e-4 or abs(var - v(i, j)) > 1e-4 * max(1.0, v(i, j)):
            bad.append(f"pref: P({i} > {j}) firmware {p!r} var {var!r} vs host {hp!r} var {v(i, j)!r}")
    if not dev.get("prob"):
        bad.append("pref: firmware printed no probabilities")
    ratio = lambda i, j: math.inf if mu[i] == mu[j] else v(i, j) / (mu[i] - mu[j]) ** 2
    best = max(ratio(i, j) for i in range(n) for j in range(i + 1, n))
    ni, nj, r = dev.get("next", (0, 0, 0.0))
    if not (ni < nj < n) or ratio(ni, nj) < (1 - 1e-3) * best:
        bad.append(f"pref: next pair ({ni}, {nj}) has host ratio {ratio(ni, nj) if ni < nj < n else None}, "
                   f"the host's best is {best}")
    order = dev.get("order", [])
    if sorted(order) != list(range(n)) or any(mu[a] < mu[b] - 1e-4 for a, b in zip(order, order[1:])):
        bad.append(f"pref: firmware order {order} is not by the host's posterior means")
    print(f"fwtool check: pref: {n} items, {host['count']} observations, posterior within {worst:.3g} "
          f"(scaled) of the host's f64 ADF; next pair ({ni}, {nj}) ratio {r:.4g} (host best {best:.4g}); "
          f"{len(dev.get('prob', []))} probabilities and the order agree")


def f32(v):
    return struct.unpack("<f", struct.pack("<f", float(v)))[0]


def read_rows(path):
    rows = []
    for line in open(path):
        line = line.split("#", 1)[0].split()
        if not line:
            continue
        feats = {}
        for tok in line[1:]:
            if tok.startswith("qid:"):
                continue
            j, v = tok.split(":")
            feats[int(j)] = float(v)
        rows.append(feats)
    dim = max(max(r) for r in rows)
    return [[f32(r.get(j, 0.0)) for j in range(1, dim + 1)] for r in rows], dim


def c_array(name, data):
    body = ",\n".join(
        "    " + ", ".join(f"0x{b:02x}" for b in data[i:i + 12]) for i in range(0, len(data), 12)
    )
    return (f"/* Generated by tests/firmware/fwtool.py; {len(data)} model bytes. */\n"
            "#include <stddef.h>\n#include <stdint.h>\n"
            f"_Alignas(8) const uint8_t {name}[{len(data)}] = {{\n{body}\n}};\n"
            f"const size_t {name}_len = {len(data)};\n")


def read_feedback(path):
    pairs = []
    for line in open(path):
        t = line.split("#", 1)[0].split()
        if t:
            pairs.append((int(t[0]), int(t[1]), f32(t[2]) if len(t) > 2 else 1.0))
    return pairs


def online_state(path):
    """(count, w) of an online-rankrls .rkl (kind 5, f32): section 9."""
    b = open(path, "rb").read()
    kind, elem, dim = b[14], b[15], struct.unpack_from("<I", b, 16)[0]
    if kind != 5 or elem != 1:
        raise ValueError(f"{path}: kind {kind}, element type {elem}: not an f32 online state")
    nsec = struct.unpack_from("<H", b, 24)[0]
    for e in range(nsec):
        sid, _, off, ln = struct.unpack_from("<HHII", b, 28 + 12 * e)
        if sid == 9:
            count = struct.unpack_from("<Q", b, off + 8)[0]
            return count, list(struct.unpack_from(f"<{dim}f", b, off + 32))
    raise ValueError(f"{path}: no ONLINE_STATE section")


def header(data, models, feedback=None):
    rows, dim = read_rows(data)
    out = ["/* Generated by tests/firmware/fwtool.py; do not edit. */",
           "#ifndef FW_MODELS_H", "#define FW_MODELS_H", "#include <stddef.h>",
           f"#define FW_DIM {dim}", f"#define FW_ROWS {len(rows)}",
           "static const float fw_rows[FW_ROWS * FW_DIM] = {"]
    for r in rows:
        out.append("    " + ", ".join(f"{v.hex()}f" for v in r) + ",")
    out.append("};")
    names = models
    out.append("#include <stdint.h>")
    for n in names:
        out.append(f"extern const uint8_t fw_model_{n}[];\nextern const size_t fw_model_{n}_len;")
    out.append("typedef struct fw_model { const char *name; const uint8_t *bytes; const size_t *len; } fw_model;")
    out.append("static const fw_model fw_models[] = {")
    out += [f'    {{"{n}", fw_model_{n}, &fw_model_{n}_len}},' for n in names]
    out.append("};")
    if feedback:
        pairs = read_feedback(feedback)
        out.append("typedef struct fw_pair { uint32_t winner, loser; float magnitude; } fw_pair;")
        out.append(f"#define FW_FEEDBACK {len(pairs)}")
        out.append("static const fw_pair fw_feedback[FW_FEEDBACK] = {")
        out += [f"    {{{w}, {l}, {m.hex()}f}}," for w, l, m in pairs]
        out.append("};")
    out.append("#endif")
    print("\n".join(out))


def stable_desc(scores):
    return sorted(range(len(scores)), key=lambda i: -scores[i])  # sorted() is stable


def check(fw_out, specs):
    fw = {}
    ok_line = False
    for line in open(fw_out, errors="replace"):
        t = line.split()
        if not t:
            continue
        if t[0] == "score":
            fw.setdefault(t[1], {}).setdefault("score", {})[int(t[2])] = struct.unpack(
                "<f", struct.pack("<I", int(t[3], 16)))[0]
        elif t[0] in ("order", "top3"):
            fw.setdefault(t[1], {})[t[0]] = [int(x) for x in t[2:]]
        elif t[0] == "online" and len(t) == 4 and t[1] == "w":
            fw.setdefault("online", {}).setdefault("w", {})[int(t[2])] = struct.unpack(
                "<f", struct.pack("<I", int(t[3], 16)))[0]
        elif t[0] == "online" and len(t) == 3 and t[1] == "count":
            fw.setdefault("online", {})["count"] = int(t[2])
        elif t[0] == "pscore" and len(t) == 5:
            fw.setdefault("pairs", {}).setdefault("score", {})[(int(t[2]), int(t[3]))] = int(t[4], 16)
        elif t[0] == "porder" and len(t) > 3:
            fw.setdefault("pairs", {}).setdefault("order", {})[int(t[2])] = [int(x) for x in t[3:]]
        elif t[0] == "pref" and len(t) == 4 and t[1] in ("mean", "cov"):
            fw.setdefault("pref", {}).setdefault(t[1], {})[int(t[2])] = bits32(t[3])
        elif t[0] == "pref" and len(t) == 3 and t[1] == "count":
            fw.setdefault("pref", {})["count"] = int(t[2])
        elif t[0] == "pref" and len(t) == 6 and t[1] == "next":
            fw.setdefault("pref", {})["next"] = (int(t[2]), int(t[3]), bits32(t[5]))
        elif t[0] == "pref" and len(t) == 7 and t[1] == "prob":
            fw.setdefault("pref", {}).setdefault("prob", []).append((int(t[2]), int(t[3]), bits32(t[4]), bits32(t[6])))
        elif t[0] == "pref" and t[1:2] == ["order"]:
            fw.setdefault("pref", {})["order"] = [int(x) for x in t[2:]]
        elif line.startswith("FIRMWARE OK"):
            ok_line = True
    bad = []
    if not ok_line:
        bad.append("firmware did not print FIRMWARE OK")
    for spec in specs:
        name, path = spec.split("=", 1)
        if name == "pairs":
            bits = lambda b: struct.unpack("<f", struct.pack("<I", b))[0]
            host = {}
            for line in open(path):
                t = line.split()
                if t:
                    host[(int(t[0]), int(t[1]))] = int(t[2], 16)
            dev = fw.get("pairs", {}).get("score", {})
            if sorted(dev) != sorted(host):
                bad.append(f"pairs: firmware printed {len(dev)} pair scores, the host has {len(host)}")
                continue
            worst, same_bits = 0.0, True
            for key, hb in sorted(host.items()):
                d, h = bits(dev[key]), bits(hb)
                same_bits &= dev[key] == hb
                rel = abs(d - h) / abs(h) if h != 0 else abs(d)
                worst = max(worst, rel)
                if rel > 1e-6:
                    bad.append(f"pairs: u {key[0]} row {key[1]}: firmware {d!r} vs host {h!r} (relative {rel:.3g})")
            for u in sorted({k[0] for k in host}):
                n = len([k for k in host if k[0] == u])
                dev_u = [bits(dev[(u, r)]) for r in range(n)]
                order = fw.get("pairs", {}).get("order", {}).get(u)
                if order != stable_desc(dev_u):
                    bad.append(f"pairs: u {u}: firmware order {order} != sort of its scores {stable_desc(dev_u)}")
            print(f"fwtool check: bilinear pair model: {len(host)} pair scores, worst relative difference to "
                  f"ranklet-core on the host {worst:.3g}{' (bit-identical)' if same_bits else ''}; orders agree")
            continue
        if name == "pref":
            check_pref(fw.get("pref", {}), path, bad)
            continue
        if name == "online":
            count, host_w = online_state(path)
            dev = fw.get("online", {}).get("w", {})
            if sorted(dev) != list(range(len(host_w))):
                bad.append(f"online: firmware printed weights {sorted(dev)}, the host state has {len(host_w)}")
                continue
            dev_w = [dev[j] for j in range(len(host_w))]
            diff = sum((a - b) ** 2 for a, b in zip(dev_w, host_w)) ** 0.5
            norm = sum(b * b for b in host_w) ** 0.5
            rel = diff / norm if norm else diff
            if rel > 1e-4:
                bad.append(f"online: firmware w {dev_w} vs host {host_w} (relative {rel:.3g} > 1e-4)")
            if fw.get("online", {}).get("count") != count:
                bad.append(f"online: firmware count {fw.get('online', {}).get('count')} != host {count}")
            print(f"fwtool check: online: {count} observations, w relative difference to `ranklet online-update` "
                  f"{rel:.3g}{' (bit-identical)' if dev_w == host_w else ''}")
            continue
        host = [float(x) for x in open(path).read().split()]
        m = fw.get(name, {})
        sc = m.get("score", {})
        if sorted(sc) != list(range(len(host))):
            bad.append(f"{name}: firmware printed scores for rows {sorted(sc)}, host has {len(host)} rows")
            continue
        dev = [sc[i] for i in range(len(host))]
        worst = 0.0
        for i, (d, h) in enumerate(zip(dev, host)):
            rel = abs(d - h) / abs(h) if h != 0 else abs(d)
            worst = max(worst, rel)
            if rel > 1e-6:
                bad.append(f"{name}: row {i}: firmware {d!r} vs host {h!r} (relative {rel:.3g} > 1e-6)")
        order = m.get("order", [])
        if order != stable_desc(dev):
            bad.append(f"{name}: firmware order {order} != host sort of the firmware's scores {stable_desc(dev)}")
        # Against the host's own scores: the same order wherever scores differ
        # by more than 1e-5 relative (DESIGN.md, Numerics).
        for a, b in zip(order, order[1:]):
            if host[a] < host[b] - 1e-5 * max(abs(host[a]), abs(host[b])):
                bad.append(f"{name}: firmware ranks row {a} ({host[a]}) above row {b} ({host[b]}) against host scores")
        exact = order == stable_desc(host)
        if m.get("top3") != order[:3]:
            bad.append(f"{name}: top3 {m.get('top3')} != first three of the order {order[:3]}")
        print(f"fwtool check: {name}: {len(host)} scores, worst relative difference to `ranklet score` "
              f"{worst:.3g}; order {'identical to' if exact else 'consistent with'} the host sort; top-3 {m.get('top3')}")
    for b in bad:
        print("MISMATCH: " + b)
    return 1 if bad else 0


def main(argv):
    if len(argv) >= 3 and argv[1] == "header":
        names, feedback = argv[3:], None
        if "--feedback" in names:
            k = names.index("--feedback")
            feedback, names = names[k + 1], names[:k] + names[k + 2:]
        header(argv[2], names, feedback)
        return 0
    if len(argv) == 4 and argv[1] == "c-array":
        print(c_array(argv[2], open(argv[3], "rb").read()), end="")
        return 0
    if len(argv) >= 3 and argv[1] == "check":
        return check(argv[2], argv[3:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/env python3
"""Writes seed corpora for the NetFlow/IPFIX fuzz targets from the shared
capture corpus (nothing is copied into the tree).

usage: seeds.py OUT_DIR [TESTDATA_DIR]

OUT_DIR/v5, v9, ipfix: one file per UDP payload of that version (pcap and
pcapng captures are unwrapped: Ethernet, 802.1Q, IPv4/IPv6, UDP; raw
payload files split like nagare's capture reader does).
OUT_DIR/ipfix also gets a few built messages with RFC 6313 structured data
(basicList, subTemplateList, subTemplateMultiList) and with application
names (IE 95/96 options data), which no capture of the corpus holds, so
that fuzz_ipfix reaches their parsing.
OUT_DIR/templates: one file per corpus group (tests/corpus/groups.py) or
file, its datagrams joined by the separator b'NGDG' + one byte.
"""
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'corpus'))
from check import index_files, is_pcap, split_payloads  # noqa: E402
from groups import GROUPS  # noqa: E402


def frame_payload(f):
    o = 12
    if len(f) < 14:
        return None
    et = struct.unpack('>H', f[o:o + 2])[0]
    while et in (0x8100, 0x88a8) and len(f) >= o + 6:
        o += 4
        et = struct.unpack('>H', f[o:o + 2])[0]
    o += 2
    if et == 0x0800 and len(f) >= o + 20 and f[o + 9] == 17:
        l4 = o + (f[o] & 15) * 4
    elif et == 0x86dd and len(f) >= o + 40 and f[o + 6] == 17:
        l4 = o + 40
    else:
        return None
    if len(f) < l4 + 8:
        return None
    return f[l4 + 8:l4 + struct.unpack('>H', f[l4 + 4:l4 + 6])[0]]


def payloads(path):
    with open(path, 'rb') as fh:
        b = fh.read()
    if not is_pcap(path):
        return split_payloads(b)
    out = []
    magic = b[:4]
    if magic == b'\x0a\x0d\x0d\x0a':
        le = b[8:12] == b'\x4d\x3c\x2b\x1a'
        e = '<' if le else '>'
        o = 0
        while o + 12 <= len(b):
            t, n = struct.unpack(e + 'II', b[o:o + 8])
            if n < 12:
                break
            if t == 6:
                cap = struct.unpack(e + 'I', b[o + 20:o + 24])[0]
                p = frame_payload(b[o + 28:o + 28 + cap])
                if p:
                    out.append(p)
            o += n
        return out
    e = '<' if magic in (b'\xd4\xc3\xb2\xa1', b'\x4d\x3c\xb2\xa1') else '>'
    o = 24
    while o + 16 <= len(b):
        cap = struct.unpack(e + 'I', b[o + 8:o + 12])[0]
        p = frame_payload(b[o + 16:o + 16 + cap])
        if p:
            out.append(p)
        o += 16 + cap
    return out


def ipfix_msg(sets):
    """An IPFIX message (RFC 7011 §3.1) of the given (set ID, body) pairs."""
    body = b''.join(struct.pack('>HH', sid, len(b) + 4) + b for sid, b in sets)
    return struct.pack('>HHIII', 10, 16 + len(body), 1700000000, 0, 1) + body


def var(b):
    """A variable-length field, RFC 7011 §7's long form."""
    return b'\xff' + struct.pack('>H', len(b)) + b


def structured_seeds():
    """IPFIX messages whose records hold RFC 6313 lists: a basicList of
    MPLS label stack sections (IE 70), a basicList of strings, a
    subTemplateList and a subTemplateMultiList, and one cut short."""
    tpl = struct.pack('>HH', 400, 5) + struct.pack(
        '>HHHHHHHHHH', 8, 4, 291, 65535, 292, 65535, 293, 65535, 1, 8)
    mpls = struct.pack('>BHH', 4, 70, 3) + bytes.fromhex('5dc100' '3e8550' '0012b1')
    names = struct.pack('>BHH', 3, 82, 65535) + b'\x07Gi0/0/1\x03lo0'
    stl = struct.pack('>BH', 3, 400) + b'\x0a\x00\x00\x01' + var(b'') * 3 + b'\0' * 8
    stml = struct.pack('>BHH', 3, 401, 8) + b'\x01\x02\x03\x04'
    rec = b'\x0a\x00\x00\x01' + var(mpls) + var(stl) + var(stml) + struct.pack('>Q', 100)
    rec2 = b'\x0a\x00\x00\x02' + var(names) + b'\x00' + b'\x02\x03\x00' + struct.pack('>Q', 1)
    # application names (NBAR): options scoped by applicationId (IE 95),
    # the name (96) variable-length; a record with IE 95
    opt = struct.pack('>HHH', 402, 2, 1) + struct.pack('>HHHH', 95, 4, 96, 65535)
    data = struct.pack('>HH', 403, 2) + struct.pack('>HHHH', 95, 4, 1, 8)
    names = b'\x0d\x00\x00\x50\x04http' + b'\x0d\x00\x01\xbb\x0bsecure-http'
    recs = b'\x0d\x00\x00\x50' + struct.pack('>Q', 10) + b'\x0d\x00\x00\x51' + struct.pack('>Q', 1)
    return [ipfix_msg([(2, tpl), (400, rec + rec2)]),
            ipfix_msg([(2, tpl), (400, rec[:-12])]),
            ipfix_msg([(3, opt), (2, data), (402, names), (403, recs)])]


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    out = sys.argv[1]
    testdata = sys.argv[2] if len(sys.argv) > 2 else os.environ.get(
        'NG_TESTDATA', os.path.join(HERE, '..', '..', '..', 'shared', 'testdata'))
    cap = os.path.join(testdata, 'captures')
    for sub in ('v5', 'v9', 'ipfix', 'templates'):
        os.makedirs(os.path.join(out, sub), exist_ok=True)
    files = [f for f, _ in index_files(cap)]
    n = 0
    for f in files:
        for i, p in enumerate(payloads(os.path.join(cap, f))):
            if len(p) < 2:
                continue
            v = struct.unpack('>H', p[:2])[0]
            sub = {1: 'v5', 5: 'v5', 7: 'v5', 9: 'v9', 10: 'ipfix'}.get(v)
            if sub:
                name = f.replace('/', '_') + '.%d' % i
                with open(os.path.join(out, sub, name), 'wb') as fh:
                    fh.write(p)
                n += 1
    for i, p in enumerate(structured_seeds()):
        with open(os.path.join(out, 'ipfix', 'rfc6313.%d' % i), 'wb') as fh:
            fh.write(p)
        n += 1
    grouped = {f for g in GROUPS for f in g}
    seqs = list(GROUPS) + [[f] for f in files if f not in grouped]
    for g in seqs:
        dgs = []
        for f in g:
            path = os.path.join(cap, f)
            if os.path.exists(path):
                dgs += payloads(path)
        if not dgs or sum(map(len, dgs)) > 200000:
            continue
        blob = b'NGDG\x00'.join(dgs)
        with open(os.path.join(out, 'templates', g[0].replace('/', '_')), 'wb') as fh:
            fh.write(blob)
        n += 1
    print('seeds.py: %d seed files in %s' % (n, out))
    return 0


if __name__ == '__main__':
    sys.exit(main())

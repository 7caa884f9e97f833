#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Copies each source file into the ConfigMap that carries it in the cluster:
kmm/Dockerfile into kmm/module-build.yaml, daemonset/rcvfix-loader.sh into
daemonset/rcvfix-loader.yaml. Run after editing either source; `make check`
(tests/unit/k8s_manifests_test.py) fails while a copy differs.
Usage: sync-embedded.py [--check]   (exit 1 if a copy differs, with --check)
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# (manifest, ConfigMap data key, source file)
EMBEDDED = [
    ("kmm/module-build.yaml", "dockerfile", "kmm/Dockerfile"),
    ("daemonset/rcvfix-loader.yaml", "rcvfix-loader.sh",
     "daemonset/rcvfix-loader.sh"),
]
INDENT = "    "


def embed(manifest, key, source):
    """The manifest's text with the block scalar under `  KEY: |` replaced."""
    text = open(os.path.join(HERE, manifest)).read()
    body = open(os.path.join(HERE, source)).read()
    block = "".join(INDENT + line if line.strip() else "\n"
                    for line in body.splitlines(True))
    pat = re.compile(r"(^  %s: \|\n)((?:(?:%s.*)?\n)*?)(?=^\S|^---)"
                     % (re.escape(key), INDENT), re.M)
    new, n = pat.subn(lambda m: m.group(1) + block, text, count=1)
    if n != 1:
        sys.exit("%s: no '  %s: |' block" % (manifest, key))
    return text, new


def main():
    check = sys.argv[1:] == ["--check"]
    differ = 0
    for manifest, key, source in EMBEDDED:
        old, new = embed(manifest, key, source)
        if old == new:
            continue
        differ = 1
        if check:
            print("%s: the copy of %s differs" % (manifest, source))
        else:
            with open(os.path.join(HERE, manifest), "w") as f:
                f.write(new)
            print("%s: updated from %s" % (manifest, source))
    return differ if check else 0


if __name__ == "__main__":
    sys.exit(main())

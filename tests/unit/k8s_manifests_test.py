#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of deploy/kubernetes (no cluster runs here): every manifest
parses (python3-yaml) and each resource has what its consumer requires -
KMM's Module its required fields and webhook rules, a mapping with a valid
image reference for each kernel the project tests, the in-cluster build's
Dockerfile the same DKMS build and image layout the project's own tests run
(dkms.conf, packaging/kmod-image.sh), the DaemonSet, the pod and the
kubelet setting what the README promises. Prints TAP."""
import fnmatch
import os
import re
import sys

try:
    import yaml
except ImportError:
    print("1..1\nok 1 - k8s manifests # SKIP python3-yaml missing (make deps)")
    sys.exit(0)

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DEPLOY = os.path.join(REPO, "deploy", "kubernetes")
sys.path.insert(0, DEPLOY)
import importlib  # noqa: E402

sys.dont_write_bytecode = True

KMM_API = "kmm.sigs.x-k8s.io/v1beta1"
MODULE = "rcvfix"
READY_LABEL = "kmm.node.kubernetes.io/%s.%s.ready"

results = []


def check(desc, cond, detail=""):
    results.append((bool(cond), desc, detail))
    return bool(cond)


def read(*parts):
    with open(os.path.join(REPO, *parts)) as f:
        return f.read()


# --- facts from the project's own files --------------------------------------

def project_facts():
    version = re.search(r'#define RCVFIX_VERSION "([^"]+)"',
                        read("module", "version.h")).group(1)
    dkms = dict(re.findall(r'^(PACKAGE_NAME|PACKAGE_VERSION)="([^"]*)"',
                           read("dkms.conf"), re.M))
    # The tested pins: 6.1 and 6.12 in the Makefile, 7.x in the chroot
    # harness (its "newest" line); arm64: 6.1 and 6.12 in vm/arm64.sh, 7.x
    # in the chroot harness once it has an arm64 pin.
    mk = read("Makefile")
    chroot = read("vm", "chroot-kernel.sh")
    arm64 = read("vm", "arm64.sh")
    kernels = [re.search(r"\),(6\.1\.0-[0-9]+-amd64)\)", mk).group(1),
               re.search(r"^KVER_612_PIN := (\S+)", mk, re.M).group(1),
               re.search(r"pin=\(\[amd64\]=(7\.\S+-amd64)", chroot).group(1),
               re.search(r"^PIN_61=(6\.1\.0-[0-9]+-arm64)$", arm64,
                         re.M).group(1),
               re.search(r"^PIN_612=(6\.12\.\S+-arm64)$", arm64,
                         re.M).group(1)]
    kernels += re.findall(r"\[arm64\]=(7\.\S+-arm64)", chroot)
    params = set()
    for name in os.listdir(os.path.join(REPO, "module")):
        if name.endswith(".c"):
            params |= set(re.findall(r"module_param\w*\(\s*(\w+)",
                                     read("module", name)))
    return version, dkms, kernels, params


# distribution/reference grammar (what a registry and kubelet accept)
_DOMAIN = r"(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)"
_PATH = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
IMAGE_REF = re.compile(r"^(?:%s(?:\.%s)*(?::[0-9]+)?/)?%s(?:/%s)*"
                       r"(?::[\w][\w.-]{0,127})?$"
                       % (_DOMAIN, _DOMAIN, _PATH, _PATH))


def kernel_arch(kver):
    """The Debian architecture a Debian kernel release ends in."""
    return kver.rsplit("-", 1)[-1]


def image_tag(kver):
    """The tag packaging/kmod-image.sh gives the image of kernel kver."""
    return kver.replace("+", "_")


def load_all():
    docs = {}
    for top, _, files in os.walk(DEPLOY):
        for name in sorted(files):
            if not name.endswith((".yaml", ".yml")):
                continue
            path = os.path.join(top, name)
            rel = os.path.relpath(path, REPO)
            try:
                with open(path) as f:
                    text = f.read()
                    items = [d for d in yaml.safe_load_all(text) if d]
            except yaml.YAMLError as e:
                check("%s parses" % rel, False, str(e))
                continue
            check("%s parses (%d resources)" % (rel, len(items)),
                  items, "no resource")
            check("%s: SPDX line" % rel,
                  "SPDX-License-Identifier: GPL-2.0" in text.split("\n")[0])
            for d in items:
                # A kubelet config file is no API object: no metadata.
                meta = d.get("kind") == "KubeletConfiguration" or \
                    (d.get("metadata") or {}).get("name")
                check("%s: %s has apiVersion, kind%s" %
                      (rel, d.get("kind"), ", metadata.name" if
                       d.get("kind") != "KubeletConfiguration" else ""),
                      d.get("apiVersion") and d.get("kind") and meta)
            docs[rel] = items
    return docs


def by_kind(items, kind):
    return [d for d in items if d.get("kind") == kind]


# --- KMM Module ----------------------------------------------------------------

def first_mapping(mappings, kver):
    """KMM uses the first kernelMapping matching the node's kernel."""
    for km in mappings:
        if km.get("literal") == kver:
            return km
        if km.get("regexp") and re.search(km["regexp"], kver):
            return km
    return None


def check_module(rel, items, facts):
    version, _, kernels, params = facts
    cms = {d["metadata"]["name"]: d for d in by_kind(items, "ConfigMap")}
    nss = {d["metadata"]["name"]: d for d in by_kind(items, "Namespace")}
    for m in by_kind(items, "Module"):
        where = "%s: Module %s" % (rel, m["metadata"]["name"])
        ns = m["metadata"].get("namespace")
        spec = m.get("spec") or {}
        check("%s: apiVersion %s" % (where, KMM_API),
              m["apiVersion"] == KMM_API, m["apiVersion"])
        check("%s: spec.selector (required) set" % where,
              isinstance(spec.get("selector"), dict) and spec["selector"])
        c = ((spec.get("moduleLoader") or {}).get("container")) or {}
        mp = c.get("modprobe") or {}
        check("%s: modprobe.moduleName is %s (rawArgs unset)" %
              (where, MODULE), mp.get("moduleName") == MODULE and
              "rawArgs" not in mp)
        for p in mp.get("parameters") or []:
            k, _, v = p.partition("=")
            check("%s: parameter %s is a module parameter of rcvfix" %
                  (where, p), k in params and v in ("0", "1"),
                  "known: %s" % sorted(params))
        check("%s: default_enable given as a parameter" % where,
              any(p.startswith("default_enable=")
                  for p in mp.get("parameters") or []))
        maps = c.get("kernelMappings") or []
        check("%s: kernelMappings has at least one item" % where, maps)
        for i, km in enumerate(maps):
            w = "%s: kernelMappings[%d]" % (where, i)
            check("%s: exactly one of literal, regexp" % w,
                  bool(km.get("literal")) != bool(km.get("regexp")))
            if km.get("regexp"):
                try:
                    re.compile(km["regexp"])
                    check("%s: regexp compiles" % w, True)
                except re.error as e:
                    check("%s: regexp compiles" % w, False, str(e))
            check("%s: containerImage" % w,
                  km.get("containerImage") or c.get("containerImage"))
            b = km.get("build") or c.get("build")
            if b:
                check_build(w, b, cms)
            sg = km.get("sign") or c.get("sign")
            if sg:
                check_sign(w, sg, km, bool(b))
        check("%s: tested kernels of amd64 and arm64" % where,
              {kernel_arch(k) for k in kernels} == {"amd64", "arm64"},
              str(kernels))
        for kver in kernels:
            arch = kernel_arch(kver)
            sel = spec.get("selector") or {}
            check("%s: spec.selector admits %s nodes (kernel %s)" %
                  (where, arch, kver),
                  sel.get("kubernetes.io/arch", arch) == arch, str(sel))
            km = first_mapping(maps, kver)
            if not check("%s: a mapping for kernel %s" % (where, kver), km):
                continue
            image = (km.get("containerImage") or c.get("containerImage"))
            image = (image.replace("${KERNEL_FULL_VERSION}", kver)
                     .replace("$KERNEL_FULL_VERSION", kver)
                     .replace("${MOD_NAME}", m["metadata"]["name"])
                     .replace("${MOD_NAMESPACE}", ns or "default"))
            check("%s: %s -> %s is a valid image reference" %
                  (where, kver, image), IMAGE_REF.match(image))
            check("%s: %s -> tag %s, the tag make kmod-image gives" %
                  (where, kver, image_tag(kver)),
                  image.rsplit(":", 1)[-1] == image_tag(kver))
            if km.get("build"):
                # KMM's build pod takes build.selector, else the Module's:
                # kaniko builds natively, so on a node of the kernel's arch.
                bsel = km["build"].get("selector") or \
                    spec.get("selector") or {}
                check("%s: %s is built on %s nodes (build.selector)" %
                      (where, kver, arch),
                      bsel.get("kubernetes.io/arch") == arch, str(bsel))
                args = {a["name"]: a["value"]
                        for a in km["build"].get("buildArgs") or []}
                suite = "trixie" if "+deb13-" in kver else "bookworm"
                check("%s: %s builds on Debian %s" % (where, kver, suite),
                      args.get("DEBIAN_SUITE") == suite, str(args))
        # Why the '+' kernels are literal: the tag cannot hold '+'.
        plus = [k for k in kernels if "+" in k]
        for kver in plus:
            check("%s: ${KERNEL_FULL_VERSION} of %s would be no valid tag" %
                  (where, kver),
                  not IMAGE_REF.match("registry.example.com/x:" + kver))
        if ns:
            labels = (nss.get(ns, {}).get("metadata") or {}).get("labels") or {}
            check("%s: namespace %s allows KMM's privileged worker pods" %
                  (where, ns), labels.get(
                      "pod-security.kubernetes.io/enforce") == "privileged")


def check_sign(where, sg, km, built):
    """KMM's sign section: the secrets sign-file needs, the module where
    make kmod-image (and the Dockerfile) put it, the image to sign."""
    check("%s: sign.keySecret and sign.certSecret name secrets" % where,
          (sg.get("keySecret") or {}).get("name") and
          (sg.get("certSecret") or {}).get("name"))
    files = sg.get("filesToSign") or []
    lit = km.get("literal") or "${KERNEL_FULL_VERSION}"
    check("%s: sign.filesToSign is rcvfix.ko in the kmod image's layout" %
          where, files == ["/opt/lib/modules/%s/rcvfix.ko" % lit], str(files))
    if not built:
        img = sg.get("unsignedImage") or ""
        check("%s: sign.unsignedImage, the unsigned image of the same "
              "kernel" % where,
              img and IMAGE_REF.match(img.replace("${KERNEL_FULL_VERSION}",
                                                  "6.1.0-1-amd64")) and
              img.rsplit(":", 1)[-1] ==
              (km.get("containerImage") or "").rsplit(":", 1)[-1] and
              img != km.get("containerImage"), img)


def check_build(where, b, cms):
    ref = (b.get("dockerfileConfigMap") or {}).get("name")
    check("%s: build.dockerfileConfigMap (required) names a ConfigMap "
          "of this file" % where, ref in cms, ref)
    if ref not in cms:
        return
    dockerfile = (cms[ref].get("data") or {}).get("dockerfile")
    check("%s: that ConfigMap has the 'dockerfile' key KMM reads" % where,
          dockerfile)
    declared = set(re.findall(r"^ARG (\w+)", dockerfile or "", re.M))
    for a in b.get("buildArgs") or []:
        check("%s: build arg %s is an ARG of the Dockerfile" %
              (where, a.get("name")), a.get("name") in declared)


# --- the Dockerfile: the project's DKMS build, make kmod-image's layout ---------

def dockerfile_steps(text):
    """(INSTRUCTION, arguments) with continuation lines joined."""
    text = re.sub(r"\\\n", " ", text)
    steps = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            ins, _, rest = line.partition(" ")
            steps.append((ins.upper(), re.sub(r"\s+", " ", rest)))
    return steps


def check_dockerfile(facts):
    version, dkms, _, _ = facts
    rel = "deploy/kubernetes/kmm/Dockerfile"
    steps = dockerfile_steps(read(rel))
    stages = [i for i, (ins, _) in enumerate(steps) if ins == "FROM"]
    check("%s: two stages, a Debian builder and a scratch image" % rel,
          len(stages) == 2 and "debian:" in steps[stages[0]][1] and
          steps[stages[1]][1] == "scratch")
    builder = steps[stages[0]:stages[1]]
    final = steps[stages[1]:]
    args = dict(re.match(r"(\w+)(?:=(.*))?$", a).groups()
                for ins, a in builder if ins == "ARG")
    check("%s: ARG KERNEL_FULL_VERSION (KMM sets it)" % rel,
          "KERNEL_FULL_VERSION" in args)
    check("%s: RCVFIX_VERSION defaults to module/version.h's %s" %
          (rel, version), args.get("RCVFIX_VERSION") == version)
    check("%s: dkms.conf is rcvfix %s too" % (rel, version),
          dkms.get("PACKAGE_NAME") == MODULE and
          dkms.get("PACKAGE_VERSION") == version, str(dkms))
    run = " ;; ".join(a for ins, a in builder if ins == "RUN")
    check("%s: installs dkms and linux-headers of the node's kernel" % rel,
          re.search(r"apt-get install .*\bdkms\b", run) and
          '"linux-headers-${KERNEL_FULL_VERSION}"' in run)
    install_sh = read("packaging", "install.sh")
    stage = re.search(r"^stage_source\(\) \{.*?^\}", install_sh,
                      re.M | re.S)
    check("%s: stages dkms.conf and module/ as make dkms-install does" % rel,
          stage and "dkms.conf" in stage.group(0) and
          "module" in stage.group(0) and
          re.search(r'cp -a \S*/dkms\.conf \S*/module "\$\{src\}/"', run))
    check("%s: dkms add and dkms build rcvfix/<version> -k <kernel>" % rel,
          'dkms add "rcvfix/${RCVFIX_VERSION}"' in run and
          'dkms build "rcvfix/${RCVFIX_VERSION}" -k '
          '"${KERNEL_FULL_VERSION}"' in run)
    check("%s: checks the module's vermagic against the kernel" % rel,
          "modinfo -F vermagic" in run)
    kmod_sh = read("packaging", "kmod-image.sh")
    check("%s: depmod -b /opt <kernel>, as packaging/kmod-image.sh" % rel,
          'depmod -b /opt "${KERNEL_FULL_VERSION}"' in run and
          'depmod -b "$stage/opt" "$kver"' in kmod_sh)
    check("%s: /opt/lib/modules/<kernel>/rcvfix.ko, as make kmod-image" %
          rel, '"${dir}/rcvfix.ko"' in run and
          'dir="/opt/lib/modules/${KERNEL_FULL_VERSION}"' in run and
          'moddir=$stage/opt/lib/modules/$kver' in kmod_sh)
    check("%s: a static cp (busybox-static), as make kmod-image" % rel,
          "busybox-static" in run and "ln -s busybox /opt/bin/cp" in run and
          'ln -s busybox "$stage/bin/cp"' in kmod_sh)
    copies = [a for ins, a in final if ins == "COPY"]
    check("%s: the image gets /opt/lib and /bin from the builder only" % rel,
          sorted(copies) == sorted(["--from=builder /opt/lib /opt/lib",
                                    "--from=builder /opt/bin /bin"]),
          str(copies))


# --- DaemonSet, pod, kubelet ------------------------------------------------------

def check_daemonset(rel, items):
    cms = {d["metadata"]["name"]: d for d in by_kind(items, "ConfigMap")}
    for ds in by_kind(items, "DaemonSet"):
        where = "%s: DaemonSet %s" % (rel, ds["metadata"]["name"])
        spec = ds["spec"]
        pod = spec["template"]["spec"]
        check("%s: selector matches the pod labels" % where,
              all(spec["template"]["metadata"]["labels"].get(k) == v
                  for k, v in spec["selector"]["matchLabels"].items()))
        c = pod["containers"][0]
        check("%s: privileged" % where,
              (c.get("securityContext") or {}).get("privileged") is True)
        vols = {v["name"]: v for v in pod.get("volumes", [])}
        mounts = {m["mountPath"]: m for m in c.get("volumeMounts", [])}
        lm = mounts.get("/lib/modules")
        check("%s: host /lib/modules read-only at /lib/modules" % where,
              lm and lm.get("readOnly") and
              vols[lm["name"]].get("hostPath", {}).get("path") ==
              "/lib/modules")
        env = {e["name"]: e.get("value") for e in c.get("env", [])}
        check("%s: DEFAULT_ENABLE is 0 or 1" % where,
              env.get("DEFAULT_ENABLE") in ("0", "1"))
        probe = ((c.get("readinessProbe") or {}).get("exec") or {})
        check("%s: readiness probe: rcvfix Live in /proc/modules" % where,
              "/proc/modules" in " ".join(probe.get("command", [])) and
              "Live" in " ".join(probe.get("command", [])))
        script = [m for p, m in mounts.items()
                  if "configMap" in vols[m["name"]] and
                  any(p in a for a in c["command"])]
        check("%s: the command runs the script of its ConfigMap" % where,
              script and vols[script[0]["name"]]["configMap"]["name"] in cms)
        check("%s: a grace period for the unload on SIGTERM" % where,
              pod.get("terminationGracePeriodSeconds", 30) >= 10)
        src = (cms.get(vols[script[0]["name"]]["configMap"]["name"], {})
               .get("data", {}).get("rcvfix-loader.sh", "")) if script else ""
        check("%s: the loader script unloads on TERM" % where,
              re.search(r"^trap stop TERM", src, re.M) and
              "rmmod rcvfix" in src)


def check_pods(rel, items, module_ns):
    for p in by_kind(items, "Pod"):
        where = "%s: Pod %s" % (rel, p["metadata"]["name"])
        spec = p["spec"]
        sysctls = {s["name"]: s["value"] for s in
                   (spec.get("securityContext") or {}).get("sysctls", [])}
        check("%s: sysctl net.rcvfix.enable = \"1\" (a string)" % where,
              sysctls.get("net.rcvfix.enable") == "1")
        check("%s: not hostNetwork (net.* sysctls need the pod's own "
              "namespace)" % where, not spec.get("hostNetwork"))
        label = READY_LABEL % (module_ns, MODULE)
        check("%s: nodeSelector on KMM's %s" % (where, label),
              label in (spec.get("nodeSelector") or {}))
    for k in by_kind(items, "KubeletConfiguration"):
        allowed = k.get("allowedUnsafeSysctls") or []
        check("%s: allowedUnsafeSysctls admits net.rcvfix.enable" % rel,
              any(fnmatch.fnmatchcase("net.rcvfix.enable", a)
                  for a in allowed) and
              all(a.startswith("net.") for a in allowed), str(allowed))


def main():
    facts = project_facts()
    docs = load_all()
    module_ns = None
    for rel, items in docs.items():
        check_module(rel, items, facts)
        check_daemonset(rel, items)
        for m in by_kind(items, "Module"):
            module_ns = m["metadata"].get("namespace", "default")
    check("a KMM Module among the manifests", module_ns)
    for rel, items in docs.items():
        check_pods(rel, items, module_ns)
    check_dockerfile(facts)
    sync = importlib.import_module("sync-embedded")
    for manifest, key, source in sync.EMBEDDED:
        old, new = sync.embed(manifest, key, source)
        check("deploy/kubernetes/%s: ConfigMap key %s is a copy of %s "
              "(else run deploy/kubernetes/sync-embedded.py)" %
              (manifest, key, source), old == new)

    print("1..%d" % len(results))
    failed = 0
    for i, (good, desc, detail) in enumerate(results, 1):
        print("%s %d - k8s: %s" % ("ok" if good else "not ok", i, desc))
        if not good:
            failed += 1
            if detail:
                print("#   %s" % detail)
    print("# %d passed, %d failed" % (len(results) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

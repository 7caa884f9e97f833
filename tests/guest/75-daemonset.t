#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The DaemonSet of deploy/kubernetes/daemonset/rcvfix-loader.yaml, run as its
# pod would run on a node, by a real container runtime (podman, crun): the
# container command, environment, readiness probe, mounts and loader script
# are read from the manifest; busybox-static stands in for its busybox image
# and a /lib/modules tree with rcvfix installed as dkms does (compressed like
# this kernel's modules) for the node's. Loads with DEFAULT_ENABLE, is ready
# once loaded, unloads on SIGTERM (podman stop, as the kubelet stops a pod),
# leaves a module it did not load, and says so when none is installed.
source "$RCVFIX_REPO/tests/guest/lib.sh"
source "$RCVFIX_REPO/tests/guest/containers.sh"
check_all_only "the DaemonSet pod three times under podman, 60-120 s per kernel"
yaml=$RCVFIX_REPO/deploy/kubernetes/daemonset/rcvfix-loader.yaml
need "$RCVFIX_KO" "$RCVFIX_BIN/sockopt" "$yaml"
python3 -c 'import yaml' 2> /dev/null ||
	skip "python3-yaml missing (make deps)"
podman_setup || { fail "podman setup"; done_testing; }
work=/tmp/rcvfix-ds-$$
on_exit "rm -rf $work"
mkdir -p "$work/cm" "$work/node/lib/modules/$KVER/updates/dkms" \
	"$work/empty/lib/modules/$KVER"

# The pod as the manifest defines it: ConfigMap files into $work/cm, the
# loader container's command, env, probe and mounts as JSON.
spec=$(python3 - "$yaml" "$work/cm" << 'EOF'
import json, os, sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
cms = {d["metadata"]["name"]: d for d in docs if d["kind"] == "ConfigMap"}
ds = next(d for d in docs if d["kind"] == "DaemonSet")
pod = ds["spec"]["template"]["spec"]
c = pod["containers"][0]
vols = {v["name"]: v for v in pod["volumes"]}
mounts = {}
for m in c["volumeMounts"]:
    v = vols[m["name"]]
    if "configMap" in v:
        for k, text in cms[v["configMap"]["name"]]["data"].items():
            open(os.path.join(sys.argv[2], k), "w").write(text)
        mounts["configMap"] = m["mountPath"]
    elif "hostPath" in v:
        mounts["hostPath"] = [v["hostPath"]["path"], m["mountPath"]]
    elif "emptyDir" in v:
        mounts["emptyDir"] = m["mountPath"]
print(json.dumps({"command": c["command"], "env": c["env"],
          "probe": c["readinessProbe"]["exec"]["command"],
          "privileged": c["securityContext"]["privileged"],
          "mounts": mounts}))
EOF
)
check "the manifest parses into a pod spec" jq -e . <<< "$spec"
check_eq "privileged, host /lib/modules read-only at /lib/modules" \
	"true /lib/modules /lib/modules" \
	"$(jq -r '"\(.privileged) \(.mounts.hostPath[0]) \(.mounts.hostPath[1])"' <<< "$spec")"
mapfile -t cmd < <(jq -r '.command[]' <<< "$spec")
mapfile -t probe < <(jq -r '.probe[]' <<< "$spec")
mapfile -t envs < <(jq -r '.env[] | "\(.name)=\(.value)"' <<< "$spec")
cm_dir=$(jq -r '.mounts.configMap' <<< "$spec")
tmp_dir=$(jq -r '.mounts.emptyDir' <<< "$spec")
check_eq "DEFAULT_ENABLE in the manifest" "DEFAULT_ENABLE=0" "${envs[*]}"

root=$work/rootfs
rootfs_new "$root" || { fail "rootfs"; done_testing; }

# The node's modules: rcvfix where dkms puts it, compressed as this
# kernel's own modules are (6.12: .ko.xz), and depmod's index.
ko=$work/node/lib/modules/$KVER/updates/dkms/rcvfix.ko
cp "$RCVFIX_KO" "$ko"
if grep -q '\.ko\.xz:' "/lib/modules/$KVER/modules.dep" 2> /dev/null; then
	xz --check=crc32 "$ko" && ko=$ko.xz
fi
depmod -b "$work/node" "$KVER" 2> /dev/null
depmod -b "$work/empty" "$KVER" 2> /dev/null
check "depmod indexed $(basename "$ko")" \
	grep -q "^updates/dkms/$(basename "$ko"):" \
	"$work/node/lib/modules/$KVER/modules.dep"

# pod_args NODE_TREE PODMAN_ARGS...: set pod to the podman run arguments of
# the loader pod with NODE_TREE as the host root.
pod_args() {
	local tree=$1
	shift
	echo "# + podman run --privileged -v $tree/lib/modules:/lib/modules:ro ... ${cmd[*]}"
	pod=(--privileged --network=none -v "$tree/lib/modules:/lib/modules:ro"
		-v "$work/cm:$cm_dir:ro" --tmpfs "$tmp_dir" "$@"
		--rootfs "$root" "${cmd[@]}")
}

# ready CTR: the readiness probe passes within 60 s.
ready() {
	local i
	for ((i = 0; i < 60; i++)); do
		podman exec "$1" "${probe[@]}" > /dev/null 2>&1 && return 0
		sleep 1
	done
	return 1
}

# pod_start CTR: podman run of the pod in the background (as the kubelet
# keeps it running), its output in $work/CTR.log.
pod_start() {
	podman run --rm --name "$1" "${pod[@]}" > "$work/$1.log" 2>&1 &
	pod_pid=$!
}

# pod_stop CTR: podman stop (SIGTERM, as the kubelet stops a pod); sets
# stop_status to the container's exit status and out to its output.
# Not in a subshell (it waits for pod_start's job).
pod_stop() {
	podman stop -t 25 "$1" > /dev/null 2>&1
	wait "$pod_pid"
	stop_status=$?
	out=$(< "$work/$1.log")
}

# one_pod NAME DEFAULT_ENABLE: a pod loads rcvfix, readiness, switch, stop.
one_pod() {
	local name=$1 en=$2 ctr=rcvfix-ds-$$-$2 ns
	pod_args "$work/node" -e "DEFAULT_ENABLE=$en"
	pod_start "$ctr"
	check "$name: readiness probe passes" ready "$ctr"
	check_eq "$name: rcvfix is loaded" 1 "$(grep -c '^rcvfix ' /proc/modules)"
	ns=$(netns_new "ds$en")
	check_eq "$name: a new namespace starts at default_enable=$en" "$en" \
		"$(rcvfix_enabled "$ns")"
	ip netns del "$ns"
	pod_stop "$ctr"
	check_eq "$name: stop exits 0" 0 "$stop_status"
	check "$name: the log says it loaded and unloaded" \
		grep -qz "loaded .*rcvfix.ko.* with default_enable=$en.*unloaded rcvfix" \
		<<< "$out"
	check_eq "$name: rcvfix is unloaded after the stop" 0 \
		"$(grep -c '^rcvfix ' /proc/modules)"
}

rcvfix_unload
one_pod "DEFAULT_ENABLE=1" 1

# With the manifest's environment, a module loaded before the pod is left
# alone (and the namespaces keep its default_enable).
rcvfix_load || { fail "load rcvfix"; done_testing; }
ctr=rcvfix-ds-$$-pre
pod_args "$work/node" "${envs[@]/#/--env=}"
pod_start "$ctr"
check "pre-loaded: readiness probe passes" ready "$ctr"
pod_stop "$ctr"
check_eq "pre-loaded: stop exits 0" 0 "$stop_status"
check "pre-loaded: the log says it left rcvfix loaded" \
	grep -q "already loaded" <<< "$out"
check_eq "pre-loaded: rcvfix is still loaded" 1 \
	"$(grep -c '^rcvfix ' /proc/modules)"
rcvfix_unload

# A node without rcvfix installed: the pod fails and says what to do.
pod_args "$work/empty" "${envs[@]/#/--env=}"
out=$(podman run --rm "${pod[@]}" 2>&1)
st=$?
check_eq "not installed: the pod exits 1" 1 "$st"
check "not installed: it says so" \
	grep -q "rcvfix is not installed for kernel $KVER on this node" <<< "$out"

done_testing

// The Pod Security Standards' "restricted" profile (which includes "baseline"), as written in
// https://kubernetes.io/docs/concepts/security/pod-security-standards/ for Kubernetes 1.29+,
// checked offline on a pod template. No offline tool applies the admission controller's checks
// to rendered manifests, so each rule of the profile is written out here.
//
// checkRestricted(where, template) returns one message per violation.

// Capabilities "baseline" lets a container add; "restricted" allows only NET_BIND_SERVICE.
const RESTRICTED_ADD = new Set(["NET_BIND_SERVICE"]);
const SAFE_SYSCTLS = new Set([
  "kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.ip_unprivileged_port_start",
  "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports",
  "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl",
  "net.ipv4.tcp_keepalive_probes",
]);
const SELINUX_TYPES = new Set(["", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"]);
const RESTRICTED_VOLUMES = new Set([
  "configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret",
]);

function checkSeLinux(where, opts, errors) {
  if (!opts) return;
  if (!SELINUX_TYPES.has(opts.type ?? "")) errors.push(`${where}: seLinuxOptions.type ${opts.type} is not allowed`);
  if (opts.user) errors.push(`${where}: seLinuxOptions.user must not be set`);
  if (opts.role) errors.push(`${where}: seLinuxOptions.role must not be set`);
}

function checkAppArmor(where, profile, errors) {
  if (profile && !["RuntimeDefault", "Localhost"].includes(profile.type)) {
    errors.push(`${where}: appArmorProfile must be RuntimeDefault or Localhost, is ${profile.type}`);
  }
}

export function checkRestricted(where, template) {
  const errors = [];
  const spec = template.spec ?? {};
  const annotations = template.metadata?.annotations ?? {};
  const psc = spec.securityContext ?? {};
  const w = `${where}: Pod Security restricted`;
  // Baseline, pod level.
  for (const field of ["hostNetwork", "hostPID", "hostIPC"]) if (spec[field]) errors.push(`${w}: ${field} must not be true`);
  if (psc.windowsOptions?.hostProcess) errors.push(`${w}: hostProcess must not be true`);
  checkSeLinux(`${w} pod`, psc.seLinuxOptions, errors);
  checkAppArmor(`${w} pod`, psc.appArmorProfile, errors);
  for (const [key, value] of Object.entries(annotations)) {
    if (key.startsWith("container.apparmor.security.beta.kubernetes.io/") && value !== "runtime/default" && !value.startsWith("localhost/")) {
      errors.push(`${w}: AppArmor annotation ${key} is ${value}`);
    }
  }
  for (const s of psc.sysctls ?? []) if (!SAFE_SYSCTLS.has(s.name)) errors.push(`${w}: sysctl ${s.name} is not in the safe set`);
  // Restricted, pod level.
  for (const v of spec.volumes ?? []) {
    const kind = Object.keys(v).find((k) => k !== "name");
    if (!RESTRICTED_VOLUMES.has(kind)) errors.push(`${w}: volume ${v.name} of type ${kind} is not allowed`);
  }
  if (psc.runAsNonRoot === false) errors.push(`${w}: pod runAsNonRoot must not be false`);
  if (psc.runAsUser === 0) errors.push(`${w}: pod runAsUser must not be 0`);
  if (psc.seccompProfile && !["RuntimeDefault", "Localhost"].includes(psc.seccompProfile.type)) {
    errors.push(`${w}: pod seccompProfile must be RuntimeDefault or Localhost, is ${psc.seccompProfile.type}`);
  }
  const containers = [
    ...(spec.initContainers ?? []).map((c) => ["init container", c]),
    ...(spec.containers ?? []).map((c) => ["container", c]),
    ...(spec.ephemeralContainers ?? []).map((c) => ["ephemeral container", c]),
  ];
  for (const [role, c] of containers) {
    const cw = `${w} ${role} ${c.name}`;
    const sc = c.securityContext ?? {};
    // Baseline.
    if (sc.privileged) errors.push(`${cw}: privileged must not be true`);
    if (sc.windowsOptions?.hostProcess) errors.push(`${cw}: hostProcess must not be true`);
    for (const p of c.ports ?? []) if (p.hostPort) errors.push(`${cw}: hostPort ${p.hostPort} is not allowed`);
    if (sc.procMount && sc.procMount !== "Default") errors.push(`${cw}: procMount must be Default`);
    checkSeLinux(cw, sc.seLinuxOptions, errors);
    checkAppArmor(cw, sc.appArmorProfile, errors);
    // Restricted.
    if (sc.allowPrivilegeEscalation !== false) errors.push(`${cw}: allowPrivilegeEscalation must be false`);
    const nonRoot = sc.runAsNonRoot ?? psc.runAsNonRoot;
    if (nonRoot !== true) errors.push(`${cw}: runAsNonRoot must be true (container or pod)`);
    if (sc.runAsUser === 0) errors.push(`${cw}: runAsUser must not be 0`);
    const seccomp = (sc.seccompProfile ?? psc.seccompProfile)?.type;
    if (!["RuntimeDefault", "Localhost"].includes(seccomp)) {
      errors.push(`${cw}: seccompProfile must be RuntimeDefault or Localhost (container or pod), is ${seccomp ?? "unset"}`);
    }
    if (!(sc.capabilities?.drop ?? []).includes("ALL")) errors.push(`${cw}: capabilities must drop ALL`);
    for (const cap of sc.capabilities?.add ?? []) {
      if (!RESTRICTED_ADD.has(cap)) errors.push(`${cw}: capability ${cap} must not be added`);
    }
  }
  return errors;
}

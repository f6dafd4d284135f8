# SPDX-License-Identifier: LGPL-2.1-or-later
"""Boot a kernel and an initramfs under qemu and watch the guest.

The guest's console (ttyS0) streams to our stdout as it comes; its result
line carries a per-boot nonce, so nothing the tests print can fake it.  The
second serial port (ttyS1) goes to a file and brings the results directory
back.  A guest that neither finishes nor dies before the timeout is killed
and reported as hung.
"""

import base64
import io
import os
import re
import select
import signal
import subprocess
import tarfile
import time

from kernels import LabError

# RG_LAB_QEMU: another binary (the lab's own tests use a fake one).
QEMU = os.environ.get('RG_LAB_QEMU', 'qemu-system-x86_64')
KVM_PROBE_TIMEOUT = 20


class BootResult:
    def __init__(self):
        self.rc = None          # the command's exit status, None if unknown
        self.hung = False
        self.qemu_rc = None
        self.features = {}
        self.console_tail = []
        self.oops = None        # the guest kernel's first "Oops:" line
        self.elapsed = 0.0

    def describe(self):
        if self.hung:
            return 'guest hung (killed after the timeout)'
        if self.rc is None:
            return ('guest ended without a result (qemu exit %s; a kernel '
                    'panic or a crash of /init?)' % self.qemu_rc)
        return 'command exit status %d' % self.rc


def _boot_id():
    with open('/proc/sys/kernel/random/boot_id') as f:
        return f.read().strip()


def kvm_usable(kernel, cache_file):
    """KVM only when a guest really boots with it: nested KVM can hang.

    The probe costs up to KVM_PROBE_TIMEOUT seconds, so its answer is kept
    in cache_file for as long as the host is not rebooted.
    """
    if os.environ.get('RG_LAB_ACCEL') in ('tcg', 'kvm'):
        return os.environ['RG_LAB_ACCEL'] == 'kvm'
    if not os.access('/dev/kvm', os.R_OK | os.W_OK):
        return False
    try:
        with open(cache_file) as f:
            boot_id, answer = f.read().split()
        if boot_id == _boot_id():
            return answer == 'kvm'
    except (OSError, ValueError):
        pass
    usable = _probe_kvm(kernel)
    with open(cache_file, 'w') as f:
        f.write('%s %s\n' % (_boot_id(), 'kvm' if usable else 'tcg'))
    return usable


def _probe_kvm(kernel):
    cmd = [QEMU, '-accel', 'kvm', '-m', '256', '-smp', '1', '-nographic',
           '-no-reboot', '-nic', 'none', '-kernel', kernel,
           '-append', 'console=ttyS0 panic=-1 rdinit=/nonexistent']
    try:
        out = subprocess.run(cmd, capture_output=True,
                             timeout=KVM_PROBE_TIMEOUT).stdout
    except subprocess.TimeoutExpired:
        return False
    return b'Linux version' in out or b'Kernel panic' in out


def qemu_command(kernel, initrd, cmdline, smp, memory_mib, accel,
                 serial_file):
    return [QEMU, '-accel', accel, '-cpu', 'max' if accel == 'tcg' else 'host',
            '-smp', str(smp), '-m', str(memory_mib),
            '-display', 'none', '-monitor', 'none', '-no-reboot',
            '-nic', 'none', '-serial', 'stdio',
            '-serial', 'file:' + serial_file,
            '-kernel', kernel, '-initrd', initrd, '-append', cmdline]


def _kill(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def boot(kernel, initrd, cmdline, nonce, smp, memory_mib, timeout, accel,
         serial_file, console_log, echo):
    """Run the guest to its end or the timeout; returns a BootResult."""
    res = BootResult()
    result_re = re.compile(r'RUNGUARD-LAB-RESULT %s rc=(\d+)' % nonce)
    feature_re = re.compile(r'lab-feature: ([^:]+): (.*)')
    cmd = qemu_command(kernel, initrd, cmdline, smp, memory_mib, accel,
                       serial_file)
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    buf = b''
    with open(console_log, 'wb') as log:
        log.write(('$ %s\n' % ' '.join(cmd)).encode())
        try:
            while True:
                left = timeout - (time.monotonic() - start)
                if left <= 0:
                    res.hung = True
                    _kill(proc)
                    break
                ready, _, _ = select.select([proc.stdout], [], [], left)
                if not ready:
                    continue
                chunk = os.read(proc.stdout.fileno(), 65536)
                if not chunk:
                    break
                log.write(chunk)
                log.flush()
                buf += chunk
                *lines, buf = buf.split(b'\n')
                for raw in lines:
                    line = raw.decode('utf-8', 'replace').rstrip('\r')
                    # Strip the firmware's terminal escapes.
                    line = re.sub(r'\x1b\[[0-9;?]*[a-zA-Z]|\x1bc', '', line)
                    res.console_tail = (res.console_tail + [line])[-40:]
                    if res.oops is None and 'Oops: ' in line:
                        res.oops = line
                    m = result_re.search(line)
                    if m:
                        res.rc = int(m.group(1))
                    m = feature_re.match(line)
                    if m:
                        res.features[m.group(1)] = m.group(2)
                    echo(line)
        finally:
            if proc.poll() is None:
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    _kill(proc)
            proc.stdout.close()
    res.qemu_rc = proc.returncode
    res.elapsed = time.monotonic() - start
    return res


def extract_results(serial_file, nonce, dest):
    """Unpack the results the guest sent on ttyS1; returns the file names."""
    try:
        with open(serial_file, 'rb') as f:
            text = f.read().decode('ascii', 'replace')
    except FileNotFoundError:
        return []
    begin = 'RUNGUARD-LAB-RESULTS-BEGIN %s' % nonce
    end = 'RUNGUARD-LAB-RESULTS-END %s' % nonce
    if begin not in text:
        return []
    if end not in text:
        raise LabError('results from the guest are incomplete (%s)'
                       % serial_file)
    payload = text.split(begin, 1)[1].split(end, 1)[0]
    data = base64.b64decode(''.join(payload.split()))
    os.makedirs(dest, exist_ok=True)
    names = []
    with tarfile.open(fileobj=io.BytesIO(data), mode='r:gz') as tar:
        for member in tar.getmembers():
            if member.issym() or member.islnk() or member.isdev():
                continue
            # Nothing may land outside dest.
            target = os.path.realpath(os.path.join(dest, member.name))
            if not target.startswith(os.path.realpath(dest) + os.sep):
                continue
            tar.extract(member, dest, set_attrs=False)
            if member.isfile():
                names.append(member.name)
    return names

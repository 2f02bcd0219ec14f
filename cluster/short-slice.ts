// A short EEVDF slice for the thread that runs the tick. On a busy machine the tick's lateness
// is mostly time spent waiting for a CPU after its timer fires: with the default slice (0.7
// ms x (1 + log2 CPUs), 1.4 ms on 2) and RUN_TO_PARITY, the task on that CPU is let finish
// its slice, and a kernel without full preemption (HZ=250) may only switch at its next 4 ms
// tick. Since Linux 6.12, sched_setattr(2) takes a per-thread slice for SCHED_OTHER
// (sched_runtime, 0.1-100 ms), and a waking task with a shorter slice preempts at once. It
// needs no privilege, and the share of CPU time stays what the nice value gives.
//
// Node cannot make that syscall, so a one-line perl script does it on our thread id (perl is
// part of every Debian-like base system; where it is missing the slice stays the default).
// The policy and nice value are read first and written back unchanged, and
// SCHED_FLAG_RESET_ON_FORK keeps the slice from being inherited by the workers, the runner
// processes and the compaction child (it also resets a negative nice value in them). The
// spawn forks the caller: do it while its heap is small (before the replay).
import { spawn } from 'node:child_process';
import { MAX_SLICE_US, MIN_SLICE_US } from '../lib/cli.ts';

export type SliceOutcome =
  | { readonly applied: true; readonly sliceUs: number }
  | { readonly applied: false; readonly why: string };

// sched_setattr and sched_getattr. Other architectures keep the default slice.
const SYSCALLS: Readonly<Record<string, readonly [number, number]>> = { x64: [314, 315], arm64: [274, 275] };

// struct sched_attr, SCHED_ATTR_SIZE_VER0 (48 bytes): size, policy, flags, nice, priority,
// runtime, deadline, period. Policies 0 (SCHED_OTHER) and 3 (SCHED_BATCH) are the fair ones;
// flag 1 is SCHED_FLAG_RESET_ON_FORK.
const SCRIPT = String.raw`
my ($set, $get, $tid, $ns) = @ARGV;
my $attr = "\0" x 48;
syscall($get + 0, $tid + 0, $attr, 48, 0) == 0 or do { print "error sched_getattr: $!\n"; exit };
my @a = unpack('LLQlLQQQ', $attr);
if ($a[1] != 0 && $a[1] != 3) { print "policy $a[1]\n"; exit }
$attr = pack('LLQlLQQQ', 48, $a[1], 1, $a[3], 0, $ns, 0, 0);
syscall($set + 0, $tid + 0, $attr, 0) == 0 or do { print "error sched_setattr: $!\n"; exit };
syscall($get + 0, $tid + 0, $attr, 48, 0) == 0 or do { print "error sched_getattr: $!\n"; exit };
print 'slice ', (unpack('LLQlLQQQ', $attr))[5], "\n";
`;

/** Asks for a slice of `sliceUs` microseconds for thread `tid` (a process's pid is its main thread). */
export function requestShortSlice(tid: number, sliceUs: number, perl = 'perl'): Promise<SliceOutcome> {
  const calls = SYSCALLS[process.arch];
  if (calls === undefined) return Promise.resolve({ applied: false, why: `no custom slices on ${process.arch}` });
  return new Promise((resolve) => {
    let out = '';
    const child = spawn(perl, ['-e', SCRIPT, String(calls[0]), String(calls[1]), String(tid), String(sliceUs * 1000)], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => { out += chunk; });
    child.on('error', (err: NodeJS.ErrnoException) => {
      resolve({ applied: false, why: err.code === 'ENOENT' ? `${perl} is not installed` : `${perl}: ${err.message}` });
    });
    child.on('close', (code) => resolve(readOutcome(out.trim(), code, sliceUs)));
  });
}

function readOutcome(line: string, code: number | null, sliceUs: number): SliceOutcome {
  const [word, ...rest] = line.split(' ');
  const value = rest.join(' ');
  if (word === 'slice') {
    // A kernel before 6.12 accepts sched_runtime for SCHED_OTHER and ignores it.
    return Number(value) === sliceUs * 1000 ? { applied: true, sliceUs } : { applied: false, why: 'this kernel has no custom slices (Linux 6.12 or later has)' };
  }
  if (word === 'policy') return { applied: false, why: `the thread runs under scheduling policy ${value}, left alone` };
  if (word === 'error') return { applied: false, why: value };
  return { applied: false, why: `perl exited with ${code ?? 'a signal'} and said "${line}"` };
}

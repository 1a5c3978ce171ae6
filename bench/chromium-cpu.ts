/**
 * Where a command's CPU goes, Chromium's processes included (they are not in the test runner's
 * "s CPU" column): runs the command (by default one browser test file, alone), scans /proc every
 * SAMPLE_MS and prints, in CPU seconds:
 *   - system-wide busy time (/proc/stat: user+nice+system+irq+softirq+steal) and wall;
 *   - the command's process tree, Chromium's processes by --type= (browser, zygote, renderer,
 *     gpu-process, utility:<sub-type>) with how many there were, the rest of the tree (node);
 *   - everything else on the machine (other processes, kernel threads) and this sampler itself.
 * A process's CPU is the last utime+stime seen for it, so up to SAMPLE_MS of a process that exits
 * is missed; the tree's total is checked against the command's cutime+cstime (what was reaped).
 *
 *   ./node_modules/.bin/node bench/chromium-cpu.ts [-- command args...]
 *   (default: TEST_CONCURRENCY=1 ./node_modules/.bin/node scripts/run-tests.ts test/web/calls.test.ts)
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

const HZ = 100;
const SAMPLE_MS = Number(process.env.SAMPLE_MS ?? 100);
const dash = process.argv.indexOf('--');
const cmd =
  dash >= 0
    ? process.argv.slice(dash + 1)
    : ['./node_modules/.bin/node', 'scripts/run-tests.ts', 'test/web/calls.test.ts'];

function systemBusy(): number {
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal
  return cpu[0] + cpu[1] + cpu[2] + cpu[5] + cpu[6] + (cpu[7] ?? 0);
}

interface Proc {
  ppid: number;
  ticks: number; // utime + stime
  first: number; // ticks when first seen (for processes that were there at the start)
  kind?: string;
  tree?: boolean;
}

const procs = new Map<number, Proc>();
let rootPid = -1;
let starting = true;

function statOf(pid: string): { ppid: number; ticks: number; ctime: number } | undefined {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    // f[0] = state (field 3); utime = field 14 -> f[11], stime f[12], cutime f[13], cstime f[14]
    return { ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]), ctime: Number(f[13]) + Number(f[14]) };
  } catch {
    return undefined;
  }
}

function kindOf(pid: number): string | undefined {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split(/[\0 ]/);
    if (!/chromium/.test(argv[0] ?? '')) return undefined;
    const type = argv.find((a) => a.startsWith('--type='))?.slice(7) ?? 'browser';
    const sub = argv.find((a) => a.startsWith('--utility-sub-type='))?.slice(19);
    return sub ? `${type}:${sub.replace(/^.*\./, '')}` : type;
  } catch {
    return undefined;
  }
}

function scan(): void {
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    const st = statOf(name);
    if (!st) continue;
    let p = procs.get(pid);
    if (!p) {
      p = { ppid: st.ppid, ticks: st.ticks, first: starting ? st.ticks : 0 };
      procs.set(pid, p);
      const parent = procs.get(st.ppid);
      p.tree = pid === rootPid || parent?.tree === true;
      if (p.tree) p.kind = kindOf(pid) ?? 'node/other';
    }
    p.ticks = st.ticks;
    if (!p.tree && (pid === rootPid || procs.get(p.ppid)?.tree)) {
      p.tree = true;
      p.first = 0;
      p.kind = kindOf(pid) ?? 'node/other';
    } else if (p.tree) {
      // a process may exec, or set its title (a zygote's child becomes a renderer), after the
      // first scan: the last name seen counts
      p.kind = kindOf(pid) ?? p.kind;
    }
  }
}

scan();
starting = false;
const self0 = process.cpuUsage();
const busy0 = systemBusy();
const t0 = performance.now();
const child = spawn(cmd[0], cmd.slice(1), {
  stdio: ['ignore', 'inherit', 'inherit'],
  env: { TEST_CONCURRENCY: '1', ...process.env },
});
rootPid = child.pid ?? -1;
scan();
const timer = setInterval(scan, SAMPLE_MS);
const code: number = await new Promise((res) => child.on('exit', (c) => res(c ?? 1)));
clearInterval(timer);
scan();
const wall = (performance.now() - t0) / 1000;
const busy = (systemBusy() - busy0) / HZ;
const selfStat = statOf('self');
const reaped = (selfStat?.ctime ?? 0) / HZ;
const selfCpu = process.cpuUsage(self0);

const byKind = new Map<string, { s: number; n: number }>();
let tree = 0;
let others = 0;
for (const [pid, p] of procs) {
  if (pid === process.pid) continue;
  const d = (p.ticks - p.first) / HZ;
  if (p.tree) {
    tree += d;
    const k = byKind.get(p.kind ?? '?') ?? { s: 0, n: 0 };
    k.s += d;
    k.n += 1;
    byKind.set(p.kind ?? '?', k);
  } else others += d;
}
const f = (x: number) => x.toFixed(1).padStart(6);
console.log(`\n== ${cmd.join(' ')} (exit ${code})`);
console.log(
  `wall ${f(wall)} s   system-wide busy ${f(busy)} s CPU (${((busy / wall / 2) * 100).toFixed(0)} % of 2 cores)`,
);
console.log(`command tree ${f(tree)} s (reaped by the command: ${reaped.toFixed(1)} s)`);
for (const [k, v] of [...byKind].sort((a, b) => b[1].s - a[1].s))
  console.log(`  ${k.padEnd(28)} ${f(v.s)} s  ${String(v.n).padStart(3)} process(es)`);
const chromium = [...byKind].filter(([k]) => k !== 'node/other').reduce((a, [, v]) => a + v.s, 0);
console.log(`  = Chromium ${f(chromium)} s`);
console.log(
  `others on the machine ${f(others)} s; this sampler ${f((selfCpu.user + selfCpu.system) / 1e6)} s`,
);
process.exitCode = code;

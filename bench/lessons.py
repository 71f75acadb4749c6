"""What each lesson costs: measure it, record it in `results/lessons/times.json`, and write it at the top of every lesson.

Run (from the repository root; every command reads and updates the one file, nothing else is kept):

    .venv/bin/python bench/lessons.py warm [LESSON ...]   # time lessons with the student and agent base built
    .venv/bin/python bench/lessons.py cold [LESSON ...]   # time lessons from empty caches; record what they built
    .venv/bin/python bench/lessons.py slow [LESSON ...]   # time the lessons that have `slow` cells, with them run
    .venv/bin/python bench/lessons.py from-log LOG [LOG]  # record `make test` logs' times (nbdev-test --timing): CI's
    .venv/bin/python bench/lessons.py check LOG           # every lesson's recorded CI time within 1.5x of that log's?
    .venv/bin/python bench/lessons.py headers             # write each lesson's cost cell and the README's table

A lesson is run exactly as `nbdev-test` runs it (`nbdev.test.test_nb`, the same skip flags, so `slow`, `gpu` and `llm`
cells are left out) in a fresh interpreter, and the time is `test_nb`'s own, the figure `nbdev-test --timing` prints
in CI. Every run gets fresh, private `AGENTFORGE_CACHE_DIR` and `AGENTFORGE_DATA_DIR` folders:
- warm: the cache holds only copies of the built tiny student and agent base (from `--base-cache`, default
  `$AGENTFORGE_CACHE_DIR`; built there first if missing) and the data dir a copy of `--base-data`: what a learner's
  first run of the lesson costs once the models are built. Nothing else is cached, so a lesson that trains the
  student pays for it (CI's fresh clone does too). The run also records, as measured facts, whether the lesson read
  the student's or the agent base's files (their access times, reset before the run) and how many times it launched
  bubblewrap (a `bwrap` on PATH that logs, then runs the real one);
- cold: both folders start empty, and what appeared in the cache afterwards (the student, the agent base) is recorded
  as what a cold run builds first. Without lesson names it runs the lessons whose warm run read a model.
Two run times per lesson, because they differ for a reason: `warm` is the lesson alone in a fresh interpreter (what a
learner's fresh kernel pays, imports included); `ci` is the lesson's line in a fresh-clone `make test` log, where
`nbdev-test --n-workers 2` runs many lessons in one worker process, so torch and transformers are usually imported
already. `check` compares the `ci` figures with another log. A cold run's extra cost is the model builds it needs
(`agentforge.run.COSTS_S`, measured in a cold `make demo`).
Timings are only as good as the machine is quiet: `how` in each section of the file says where they were measured.
`OMP_NUM_THREADS` is passed through as set (the file records it). Prints figures; asserts nothing.
"""
import argparse, datetime, hashlib, json, os, platform, re, shutil, subprocess, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NBS, README = ROOT / 'nbs', ROOT / 'README.md'
TIMES = ROOT / 'results' / 'lessons' / 'times.json'
OLD = 946684800  # 2000-01-01: the access time copied model files get before a run
HEADER = '**What this lesson costs.**'  # the first words of every lesson's cost cell (the cell after the title)
PROSE_WPM, CODE_LPM = 200, 20  # reading speed: words of prose per minute, lines of code per minute
README_START, README_END = '<!-- lesson-costs:start -->', '<!-- lesson-costs:end -->'

CHILD = r'''
import json, sys
from nbdev.config import get_config
from nbdev.test import test_nb
cfg = get_config()
skip = cfg.tst_flags.split() if isinstance(cfg.tst_flags, str) else list(cfg.tst_flags)
ok, secs = test_nb(sys.argv[1], skip_flags=skip, force_flags=sys.argv[2].split(), basepath=cfg.config_path,
                   cell_timeout=int(cfg.get('cell_timeout', 600)) or None)
print('LESSON-TIME ' + json.dumps(dict(ok=bool(ok), seconds=round(secs, 1))))
'''

def lessons() -> list:
    "Every lesson's name (the notebooks nbdev-test runs), sorted as nbdev-test sorts them."
    return sorted(p.stem for p in NBS.glob('*.ipynb') if not p.name.startswith(('_', '.')))

def load_nb(name:str) -> dict: return json.loads((NBS / f'{name}.ipynb').read_text())

def save_nb(name:str, nb:dict):
    (NBS / f'{name}.ipynb').write_text(json.dumps(nb, indent=1, ensure_ascii=False) + '\n')

def _src(cell:dict) -> str: return ''.join(cell['source'])

def is_cost_cell(cell:dict) -> bool: return cell['cell_type'] == 'markdown' and _src(cell).startswith(HEADER)

def slow_cells(nb:dict) -> int:
    "How many code cells carry the `slow` flag (nbdev-test skips them)."
    return sum(c['cell_type'] == 'code' and bool(re.search(r'^#\|\s*slow\b', _src(c), re.M)) for c in nb['cells'])

def reading(nb:dict) -> dict:
    "Words of prose and lines of code a reader reads (the cost cell, directives and blank lines left out), and minutes."
    words = sum(len(_src(c).split()) for c in nb['cells'] if c['cell_type'] == 'markdown' and not is_cost_cell(c))
    code = sum(1 for c in nb['cells'] if c['cell_type'] == 'code'
               for l in _src(c).splitlines() if l.strip() and not l.lstrip().startswith('#|'))
    return dict(words=words, code_lines=code, minutes=words / PROSE_WPM + code / CODE_LPM)

# ---------------------------------------------------------------- measuring
def _env(cache:Path, data:Path, shim:Path|None) -> dict:
    env = {**os.environ, 'AGENTFORGE_CACHE_DIR': str(cache), 'AGENTFORGE_DATA_DIR': str(data)}
    env.pop('CI', None)  # a developer's run: the sandbox's CI refusal is not what is timed here
    if shim: env['PATH'] = f"{shim}{os.pathsep}{env.get('PATH', '')}"
    return env

def _bwrap_shim(tmp:Path) -> tuple:
    "A `bwrap` that appends a line to a log and runs the real one; (its folder, the log), or (None, None) without bwrap."
    real = shutil.which('bwrap')
    if not real: return None, None
    d, log = tmp / 'shim', tmp / 'bwrap.log'
    d.mkdir(); log.touch()
    (d / 'bwrap').write_text(f'#!/bin/sh\necho launched >> "{log}"\nexec "{real}" "$@"\n')
    (d / 'bwrap').chmod(0o755)
    return d, log

def _atime_works(tmp:Path) -> bool:
    "Whether reading a file updates its access time here (not on a `noatime` mount)."
    f = tmp / 'atime-probe'; f.write_text('x'); os.utime(f, (OLD, f.stat().st_mtime)); f.read_text()
    return f.stat().st_atime > OLD + 1

def _files(d:Path) -> list: return [p for p in d.rglob('*') if p.is_file()] if d.exists() else []

def ensure_base(cache:Path, data:Path):
    "Build the tiny student and the agent base in `cache` if they are not there (minutes, once)."
    code = ('from agentforge.student import build_student; from agentforge.cloning import build_agent_base; '
            'print(build_student(progress=False)); print(build_agent_base(progress=False))')
    subprocess.run([sys.executable, '-c', code], env=_env(cache, data, None), cwd=ROOT, check=True)

def model_dirs(cache:Path) -> dict:
    "The cache folders of the current tiny student and agent base (whether or not they are built)."
    code = ('import json; from agentforge.student import StudentRecipe; from agentforge.cloning import agent_base_dir; '
            'print(json.dumps(dict(student="students/" + StudentRecipe().key(), agent=str(agent_base_dir().relative_to('
            '__import__("agentforge.tasks").tasks.cache_dir())))))')
    out = subprocess.run([sys.executable, '-c', code], env=_env(cache, cache, None), cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])

def run_lesson(name:str, mode:str, base_cache:Path, base_data:Path, dirs:dict, flags:str='', timeout:int=3600) -> dict:
    "Run one lesson under `mode` ('warm' or 'cold') in fresh folders; its time and what it read, built and launched."
    tmp = Path(tempfile.mkdtemp(prefix=f'lesson-{name}-'))
    cache, data = tmp / 'cache', tmp / 'data'
    cache.mkdir(); data.mkdir()
    if mode == 'warm':
        for rel in dirs.values(): shutil.copytree(base_cache / rel, cache / rel)
        shutil.copytree(base_data, data, dirs_exist_ok=True)
        for f in _files(cache): os.utime(f, (OLD, f.stat().st_mtime))
    shim, log = _bwrap_shim(tmp)
    atime, load0 = _atime_works(tmp), os.getloadavg()[0]
    t0 = time.monotonic()
    p = subprocess.Popen([sys.executable, '-c', CHILD, str(NBS / f'{name}.ipynb'), flags], cwd=ROOT,
                         env=_env(cache, data, shim), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         start_new_session=True)
    try: out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, 9); out, _ = p.communicate()
    wall = time.monotonic() - t0
    m = re.search(r'^LESSON-TIME (.*)$', out, re.M)
    res = json.loads(m.group(1)) if m else dict(ok=False, seconds=None)
    res['wall_seconds'] = round(wall, 1)
    res['load_avg_1min'] = [round(load0, 2), round(os.getloadavg()[0], 2)]  # at start and end: how busy the machine was
    if not res['ok']:
        res['error_tail'] = out[-2000:]
        if (m := re.search(r'TimeoutError: Timed out after (\d+)s', out)): res['cell_timeout_s'] = int(m.group(1))
    res['bwrap_launches'] = len(log.read_text().splitlines()) if log else None
    if mode == 'warm':
        res['reads'] = sorted(k for k, rel in dirs.items() if any(f.stat().st_atime > OLD + 1 for f in _files(cache / rel)))\
            if atime else None
    else:
        res['builds'] = sorted(k for k, rel in dirs.items() if _files(cache / rel))
    res['cache_after'] = sorted(p.name for p in cache.iterdir())
    res['date'], res['commit'] = datetime.date.today().isoformat(), _git_commit()
    shutil.rmtree(tmp, ignore_errors=True)
    return res

def _git_commit() -> str:
    try:
        sha = subprocess.run(['git', 'rev-parse', '--short', 'HEAD'], cwd=ROOT, capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(['git', 'status', '--porcelain', '--', 'nbs', 'agentforge'], cwd=ROOT, capture_output=True,
                               text=True).stdout.strip()
        return sha + ('+uncommitted changes' if dirty else '')
    except OSError: return 'unknown'

def how(mode:str) -> dict:
    "Where and how a section's figures were measured."
    return dict(tool=f'bench/lessons.py {mode}', commit=_git_commit(), date=datetime.date.today().isoformat(),
                machine=f'{platform.node()}: {os.cpu_count()} cores', load_avg_1min_at_start=round(os.getloadavg()[0], 2),
                OMP_NUM_THREADS=os.environ.get('OMP_NUM_THREADS'))

def read_times() -> dict: return json.loads(TIMES.read_text()) if TIMES.exists() else {}

def write_times(t:dict):
    TIMES.parent.mkdir(parents=True, exist_ok=True)
    TIMES.write_text(json.dumps(t, indent=1, sort_keys=True) + '\n')

def measure(mode:str, names:list, base_cache:Path, base_data:Path, note:str=''):
    "Run `names` one at a time under `mode` and merge each result into the file as soon as it is known."
    dirs = model_dirs(base_cache)
    if mode in ('warm', 'slow'): ensure_base(base_cache, base_data)
    section = dict(how={**how(mode), **({'note': note} if note else {})}, lessons={})
    for name in names:
        r = run_lesson(name, 'cold' if mode == 'cold' else 'warm', base_cache, base_data, dirs,
                       flags='slow' if mode == 'slow' else '')
        print(f"{name:16s} {mode}: {r['seconds']} s (wall {r['wall_seconds']} s) ok={r['ok']} "
              f"{'reads' if 'reads' in r else 'builds'}={r.get('reads', r.get('builds'))} bwrap={r['bwrap_launches']}",
              flush=True)
        t = read_times()
        old = t.get(mode, {}).get('lessons', {})
        section['lessons'] = {**old, **section['lessons'], name: {**r, 'how': section['how']}}
        # the section's `how` describes the lessons measured with it; a lesson measured later carries its own (a run
        # over every lesson renews the section's)
        whole = set(names) >= set(lessons())
        t[mode] = dict(section, how=section['how'] if whole else t.get(mode, {}).get('how', section['how']))
        write_times(t)

def ci_times(log:str) -> dict:
    "Per-lesson seconds from `nbdev-test --timing` lines (`NAME.ipynb: N secs`) in a log."
    return {m.group(1): float(m.group(2)) for m in re.finditer(r'^(\S+)\.ipynb: (\d+) secs\s*$', log, re.M)}

def from_log(paths:list, note:str=''):
    """Record `make test` logs' per-lesson times as the file's `ci` section: the mean over the logs (CI's figure for a
    lesson moves from run to run with which worker imported torch first), each log's figure kept beside it; a lesson
    only some logs ran (a new one) gets the mean of those, and names them."""
    logs = {Path(p).name: ci_times(Path(p).read_text(errors='replace')) for p in paths}
    if empty := [n for n, ci in logs.items() if not ci]:
        sys.exit(f'{empty}: no `NAME.ipynb: N secs` lines (was nbdev-test run with --timing?)')
    commits = [m.group(1) for p in paths if (m := re.search(r'\bat ([0-9a-f]{7,40})\b', Path(p).read_text()[:2000]))]
    names = sorted(set.union(*(set(ci) for ci in logs.values())))  # a lesson only some logs ran: the mean of those
    t = read_times()
    def entry(n):
        runs = {log: ci[n] for log, ci in logs.items() if n in ci}
        e = dict(seconds=round(sum(runs.values()) / len(runs), 1), ok=True, runs=list(runs.values()))
        return e if len(runs) == len(logs) else dict(e, how=dict(date=datetime.date.today().isoformat(), note=(
            f"from {', '.join(runs)} only (the other logs did not run it)")))
    t['ci'] = dict(how=dict(tool=f"bench/lessons.py from-log {' '.join(logs)}", date=datetime.date.today().isoformat(),
                            commit=', '.join(commits) or 'not stated in the logs',
                            note=note or 'nbdev-test --n-workers 2 --timing in fresh-clone make tests (whole seconds)'),
                   lessons={n: entry(n) for n in names})
    write_times(t)
    print(f'{len(names)} lessons read from {len(logs)} log(s): {", ".join(logs)}')

def ratio(a:float, b:float, floor:float=5.0) -> float:
    "How many times one time is the other, with both raised to `floor` seconds (whole-second CI figures of tiny lessons)."
    a, b = max(a, floor), max(b, floor)
    return max(a, b) / min(a, b)

def check(path:Path, limit:float=1.5) -> int:
    "Compare the file's CI times with another CI log's; return how many lessons are off by more than `limit`."
    ci, warm = ci_times(path.read_text(errors='replace')), read_times().get('ci', {}).get('lessons', {})
    bad = 0
    for n in lessons():
        a, b = warm.get(n, {}).get('seconds'), ci.get(n)
        r = ratio(a, b) if a is not None and b is not None else None
        flag = 'missing' if r is None else ('OFF' if r > limit else 'ok')
        bad += flag != 'ok'
        print(f'{n:16s} file {a!s:>7} s   CI {b!s:>7} s   {"" if r is None else f"x{r:.2f}"}  {flag}')
    return bad

# ---------------------------------------------------------------- writing the figures down
def fmt_s(s:float) -> str:
    "A duration as a reader wants it: '8 s', '45 s', '2.5 min', '12 min'."
    if s < 1: return 'under 1 s'
    if s < 90: return f'{round(s)} s'
    m = s / 60
    return f'{m:.1f} min' if m < 10 else f'{round(m)} min'

def fmt_read(minutes:float) -> str: return f'about {max(1, round(minutes))} min'

BUILDS = dict(student='the tiny student (a copy of the shipped build)', agent='the agent base')  # in the order a cold run makes them

def _order(keys) -> list: return [k for k in BUILDS if k in keys]

def cost(name:str, t:dict) -> dict:
    "Everything the cost cell and the README's row say about `name`, from the file (None where it was not measured)."
    w = t.get('warm', {}).get('lessons', {}).get(name, {})
    c = t.get('cold', {}).get('lessons', {}).get(name, {})
    s = t.get('slow', {}).get('lessons', {}).get(name, {})
    ci = t.get('ci', {}).get('lessons', {}).get(name, {})
    return dict(warm=w.get('seconds') if w.get('ok') else None, cold=c.get('seconds') if c.get('ok') else None,
                ci=ci.get('seconds'),
                builds=c.get('builds') if c.get('ok') else None, reads=w.get('reads'), bwrap=w.get('bwrap_launches'),
                slow=s.get('seconds') if s.get('ok') else None)

BUILD_COST = dict(student='student', agent='agent_base')  # this file's names for the models -> `run.COSTS_S`'s

def build_seconds() -> dict:
    "Seconds each model build costs on 2 cores, measured in a cold `make demo` (one place: `agentforge.run.COSTS_S`)."
    from agentforge.run import COSTS_S
    return {k: COSTS_S[v] for k, v in BUILD_COST.items()}

def _builds_text(names:list, costs:dict) -> str:
    return ' and '.join(f'{BUILDS[x]} ({fmt_s(costs[x])})' for x in _order(names))

def cold_estimate(k:dict, costs:dict) -> float:
    "A cold run not timed: the warm run plus the measured builds of the models the lesson reads."
    return (k['warm'] or 0) + sum(costs[x] for x in k['reads'])

def _cold_text(k:dict, costs:dict|None=None) -> str:
    if k['cold'] is not None:
        b = k['builds'] or []
        return fmt_s(k['cold']) + ' cold' + (f" (it builds {' and '.join(BUILDS[x] for x in _order(b))} first)" if b
                                             else ' (it builds nothing first)')
    if k['reads'] == []: return 'a cold run builds nothing first (it reads neither the student nor the agent base)'
    if k['reads']:
        costs = costs or build_seconds()
        return (f"cold about {fmt_s(cold_estimate(k, costs))}: it first makes {_builds_text(k['reads'], costs)}, build times measured in a "
                f"cold `make demo` (`run.COSTS_S`), then runs as warm")
    return 'cold not measured'

def _bwrap_text(k:dict) -> str:
    if k['bwrap'] is None: return 'Bubblewrap: not measured.'
    if k['bwrap'] == 0: return 'Bubblewrap: not needed (it starts no sandbox).'
    return ('Bubblewrap: needed (it runs agent code in the sandbox; without `bwrap` the weak mode, with a warning, and '
            'refused when `CI=true`).')

def header(name:str, nb:dict, t:dict) -> str:
    "The lesson's cost cell, from the file and the notebook's own text."
    k, r, n_slow = cost(name, t), reading(nb), slow_cells(nb)
    if k['warm'] is None: run = 'not measured yet'
    else:
        ci = f"{fmt_s(k['ci'])} in CI's `make test` (two lessons at a time, libraries usually imported by an earlier one); " \
            if k['ci'] is not None else ''
        if k['ci'] is not None and (own := t['ci']['lessons'][name].get('how')):  # timed by fewer logs than the others
            ci = f"{fmt_s(k['ci'])} under `nbdev-test` ({own['note']}); "
        run = f"{ci}{fmt_s(k['warm'])} warm, alone in a fresh kernel; {_cold_text(k)}"
    slow = ''
    if n_slow:
        cells = 'its `slow` cell' if n_slow == 1 else f'its {n_slow} `slow` cells'
        slow = (f" With {cells} (CI skips {'it' if n_slow == 1 else 'them'}) it takes {fmt_s(k['slow'])} warm."
                if k['slow'] is not None
                else f' CI skips {cells}; {"its" if n_slow == 1 else "their"} time is not measured.')
    cold_when = f" ({_when(t, 'cold', name)})" if k['cold'] is not None else ''
    return (f"{HEADER} Reading: {fmt_read(r['minutes'])} ({r['words']:,} words, {r['code_lines']:,} lines of code). "
            f"Running (every cell but the `slow` ones, as CI runs it): {run}. {_bwrap_text(k)}{slow}\n\n"
            f"<sub>From `results/lessons/times.json`, written by `bench/lessons.py`. Warm: the student and agent base "
            f"already built, nothing else cached ({_when(t, 'warm', name)}). "
            + (f"CI: {_when(t, 'ci', name)}. " if k['ci'] is not None else '') +
            f"Cold: empty caches{cold_when}. "
            f"Reading at {PROSE_WPM} words and {CODE_LPM} lines of code a minute.</sub>")

def _when(t:dict, section:str, name:str|None=None) -> str:
    "When and how a section of the file (or the lesson's own later measurement in it) was measured, in a few words."
    h = t.get(section, {}).get('lessons', {}).get(name, {}).get('how') or t.get(section, {}).get('how')
    return f"measured {h['date']}" + (f", {h['note']}" if h.get('note') else '') if h else 'not measured'


def _cell(text:str) -> dict:
    lines = text.split('\n')
    return dict(cell_type='markdown', metadata={}, source=[l + '\n' for l in lines[:-1]] + [lines[-1]])

def write_header(name:str, t:dict) -> bool:
    "Put the cost cell right after the title cell (replacing the old one); True if the notebook changed."
    nb = load_nb(name)
    text = header(name, nb, t)
    cells = nb['cells']
    if len(cells) > 1 and is_cost_cell(cells[1]):
        if _src(cells[1]) == text: return False
        cells[1]['source'] = _cell(text)['source']
    else:
        c = _cell(text)
        if nb.get('nbformat_minor', 0) >= 5:  # keys in the order nbdev-clean writes them
            c = dict(cell_type=c['cell_type'], id=hashlib.sha1(f'cost-{name}'.encode()).hexdigest()[:8],
                     metadata=c['metadata'], source=c['source'])
        cells.insert(1, c)
    save_nb(name, nb)
    return True

def readme_table(t:dict) -> str:
    "The README's table of every lesson's run time and needs, from the file (reading time is in each lesson)."
    rows = ['| lesson | in CI | warm, fresh kernel | cold (what it builds first) | bubblewrap |', '|---|---|---|---|---|']
    costs = build_seconds()
    for n in lessons():
        k = cost(n, t)
        cold = (fmt_s(k['cold']) + (f" ({', '.join(BUILDS[x] for x in _order(k['builds']))})" if k['builds'] else '')
                if k['cold'] is not None else
                'nothing to build' if k['reads'] == [] else
                f"about {fmt_s(cold_estimate(k, costs))} "
                f"({', '.join(BUILDS[x] for x in _order(k['reads']))})" if k['reads'] else 'not measured')
        bw = 'not measured' if k['bwrap'] is None else 'needed' if k['bwrap'] else 'no'
        warm = fmt_s(k['warm']) if k['warm'] is not None else 'not measured'
        ci = fmt_s(k['ci']) if k['ci'] is not None else 'not measured'
        rows.append(f"| `{n}` | {ci} | {warm} | {cold} | {bw} |")
    w, c, i = (t.get(x, {}).get('how', {}) for x in ('warm', 'cold', 'ci'))
    src = lambda h: f"{h.get('tool', '?')} at `{h.get('commit', '?')}`, {h.get('date', '?')}" + \
        (f" ({h['note']})" if h.get('note') else '')
    builds = ', '.join(f'{BUILDS[x]} {fmt_s(costs[x])}' for x in BUILDS)
    return '\n'.join([README_START, *rows, '', f"In CI: {src(i) if i else 'not measured'}. Warm: {src(w)}. "
                      f"Cold: {src(c) if c else 'not measured'}; where not timed, warm plus the builds ({builds}, "
                      f"`agentforge.run.COSTS_S`, measured in a cold `make demo`).", README_END])

def write_readme(t:dict) -> bool:
    text = README.read_text()
    if README_START not in text: sys.exit(f'README.md has no {README_START} … {README_END} block to fill')
    new = re.sub(re.escape(README_START) + '.*?' + re.escape(README_END), lambda m: readme_table(t), text, flags=re.S)
    if new != text: README.write_text(new)
    return new != text

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('cmd', choices=['warm', 'cold', 'slow', 'from-log', 'check', 'headers'])
    ap.add_argument('args', nargs='*', help='lesson names (warm/cold/slow) or the log (from-log/check)')
    ap.add_argument('--base-cache', default=os.environ.get('AGENTFORGE_CACHE_DIR'), help='where the built models are')
    ap.add_argument('--base-data', default=os.environ.get('AGENTFORGE_DATA_DIR'), help='a platform data dir to copy')
    ap.add_argument('--note', default='', help='recorded with the figures (e.g. "quiet machine")')
    a = ap.parse_args(argv)
    if a.cmd in ('warm', 'cold', 'slow'):
        if not a.base_cache or not a.base_data: sys.exit('set AGENTFORGE_CACHE_DIR and AGENTFORGE_DATA_DIR (or --base-*)')
        t = read_times()
        names = a.args or (lessons() if a.cmd == 'warm' else
                           [n for n in lessons() if slow_cells(load_nb(n))] if a.cmd == 'slow' else
                           [n for n in lessons() if t.get('warm', {}).get('lessons', {}).get(n, {}).get('reads', [1])])
        if bad := [n for n in names if n not in lessons()]: sys.exit(f'unknown lessons {bad}; known: {lessons()}')
        measure(a.cmd, names, Path(a.base_cache), Path(a.base_data), a.note)
    elif a.cmd == 'from-log': from_log(a.args, a.note)
    elif a.cmd == 'check': sys.exit(1 if check(Path(a.args[0])) else 0)
    else:
        t = read_times()
        changed = [n for n in lessons() if write_header(n, t)]
        print(f"cost cells rewritten: {changed or 'none'}; README table {'rewritten' if write_readme(t) else 'unchanged'}")

if __name__ == '__main__': main()

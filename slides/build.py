"""Build the course decks: reveal.js slides that open from disk with no network.

    python slides/build.py                  # every deck in slides/decks/ -> _slides/<deck>.html, _slides/index.html
    python slides/build.py reward-shaping   # one deck (its name, or its file stem)
    python slides/build.py --list           # the decks and their lessons

A deck (`slides/decks/NN-name.md`) is pandoc Markdown with Jinja2 helpers, rendered one slide at a time. Nothing that
comes from our runs or our code is typed into a deck: numbers are read from `results/` JSON (`load`, `demo_dir`) or
computed by the library (`lib`) at build time; code is excerpted from `agentforge/*.py` or a lesson's cells (`code`,
`cell`); figures are `results/**.png` (`fig`) or drawn from results JSON with matplotlib (`plot`); quiz questions come
from `nbs/quizzes/*.yaml` (`quiz`), their answers in the speaker notes. Every file a slide read is named on that
slide (a "Source:" line the build adds), a missing file or key fails the build with its name, and every slide must
carry speaker notes (`::: notes`) or the build fails.

Rendering: pandoc (the `pypandoc-binary` wheel) `-t revealjs --embed-resources --mathml`, against reveal.js 5 from
npm (`slides/package.json`, pinned by its lock file, installed by `make slides`), with reveal's white theme minus
its web font (system fonts only). Each deck is one self-contained HTML file; `slides/offline.py` checks that none
names a remote asset.
"""
import argparse, ast, functools, html, importlib, json, math, os, re, shutil, subprocess, sys, time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
SLIDES = Path(__file__).resolve().parent
DECKS = SLIDES / 'decks'
OUT = ROOT / '_slides'
STAGE = ROOT / 'build' / 'slides'
REVEAL = SLIDES / 'node_modules' / 'reveal.js'
REVEAL_FILES = ('dist/reset.css', 'dist/reveal.css', 'dist/reveal.js', 'plugin/notes/notes.js',
                'plugin/search/search.js', 'plugin/zoom/zoom.js')
sys.path.insert(0, str(SLIDES))
from offline import remote_assets  # noqa: E402


class BuildError(Exception):
    "A deck cannot be built as written: a missing file or key, a slide without notes, a failed conversion."


# ---------------------------------------------------------------- the slide being rendered, and what it read

class Slide:
    "What the slide being rendered has read: its sources (named in its footer)."
    def __init__(self, deck:str, title:str): self.deck, self.title, self.sources = deck, title, []
    def used(self, what:str):
        if what not in self.sources: self.sources.append(what)


_CUR: list = [None]


def _used(what:str):
    if _CUR[0] is not None: _CUR[0].used(what)


def _rel(p:Path) -> str:
    return str(Path(p).resolve().relative_to(ROOT))


def _path(rel:str) -> Path:
    p = ROOT / rel
    if not p.exists(): raise BuildError(f'{_CUR[0].deck}: slide "{_CUR[0].title}" needs {rel}, which does not exist')
    return p


# ---------------------------------------------------------------- helpers the decks call

@functools.lru_cache(None)
def _load(rel:str):
    p = ROOT / rel
    if p.suffix == '.jsonl': return [json.loads(line) for line in p.read_text().splitlines() if line.strip()]
    if p.suffix in ('.yaml', '.yml'): return yaml.safe_load(p.read_text())
    return json.loads(p.read_text())


class Data:
    "A value read from a results file: indexing a missing key fails the build, naming the file and the key."
    def __init__(self, v, src:str, where:str=''): self.v, self.src, self.where = v, src, where
    def __getitem__(self, k):
        try: x = self.v[k]
        except (KeyError, IndexError, TypeError):
            raise BuildError(f'{self.src} has no {self.where}[{k!r}] (a deck reads it)') from None
        return Data(x, self.src, f'{self.where}[{k!r}]') if isinstance(x, (dict, list)) else x
    __getattr__ = lambda self, k: self[k] if not k.startswith('_') else object.__getattribute__(self, k)
    def __iter__(self):
        it = self.v.items() if isinstance(self.v, dict) else enumerate(self.v)
        for k, x in it:
            yield Data(x, self.src, f'{self.where}[{k!r}]') if isinstance(x, (dict, list)) else x
    def __len__(self): return len(self.v)
    def keys(self): return list(self.v.keys())
    def items(self): return [(k, self[k]) for k in self.v]
    @property
    def raw(self): return self.v


def load(rel:str) -> Data:
    "Read a results file (JSON, JSON lines or YAML), relative to the repository; the slide names it."
    _path(rel)
    _used(rel)
    v = _load(rel)
    return Data(v, rel) if isinstance(v, (dict, list)) else v


def demo_dir() -> str:
    "The newest recorded two-loop run: `results/<date>-demo/` with a `metrics.jsonl` (the latest name sorts last)."
    runs = sorted(p for p in (ROOT / 'results').glob('*-demo') if (p / 'metrics.jsonl').exists())
    if not runs: raise BuildError('no recorded run: results/*-demo/metrics.jsonl is missing')
    return _rel(runs[-1])


def exists(rel:str) -> bool:
    "Whether a results file is there (for a figure a newer run records and an older one does not)."
    return (ROOT / rel).exists()


def lib(name:str):
    "An `agentforge` module, to compute with at build time; the slide says so."
    try: m = importlib.import_module(f'agentforge.{name}')
    except Exception as e:  # noqa: BLE001 - a library that does not import is a failed build, said plainly
        raise BuildError(f'agentforge.{name} does not import ({type(e).__name__}: {e}); a deck computes with it') from e
    _used(f'computed at build time with agentforge.{name}')
    return m


def _literal(node):
    "A literal, or `dict(k=literal, ...)`, from the source (what a constant of the library is set to)."
    if isinstance(node, ast.Call) and getattr(node.func, 'id', None) == 'dict' and not node.args:
        return {k.arg: _literal(k.value) for k in node.keywords}
    return ast.literal_eval(node)


def const(module:str, name:str):
    """A constant or a dataclass field's default in `agentforge/<module>.py` (`NAME` or `Class.field`), read from the
    source without importing the module (the heavy ones import torch and TRL); the slide names the file."""
    p = _module_path(module)
    body, node = ast.parse(p.read_text()).body, None
    *owner, field = name.split('.')
    for part in owner:
        body = next((n.body for n in body if isinstance(n, ast.ClassDef) and n.name == part), None)
        if body is None: raise BuildError(f'agentforge/{module}.py has no class {part!r} (a deck reads {name})')
    for n in body:
        if isinstance(n, ast.AnnAssign) and getattr(n.target, 'id', None) == field and n.value is not None: node = n.value
        elif isinstance(n, ast.Assign) and field in [getattr(t, 'id', None) for t in n.targets]: node = n.value
        elif (isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Tuple) and isinstance(n.value, ast.Tuple)
              and field in (names := [getattr(t, 'id', None) for t in n.targets[0].elts])):
            node = n.value.elts[names.index(field)]  # A, B = 1, 2
    if node is None: raise BuildError(f'agentforge/{module}.py sets no {name!r} (a deck reads it)')
    try: v = _literal(node)
    except ValueError: raise BuildError(f'agentforge/{module}.py: {name} is not a literal') from None
    _used(f'agentforge/{module}.py')
    return v


def fig(rel:str, caption:str='', width:str='80%') -> str:
    "A figure file from `results/` (or anywhere in the repository), embedded in the deck."
    p = _path(rel)
    _used(rel)
    return f'![{caption}]({p}){{width={width}}}'


PLOTS = {}


def _plot(fn):
    PLOTS[fn.__name__] = fn
    return fn


def plot(name:str, caption:str='', width:str='80%', **kw) -> str:
    "A figure drawn at build time by `PLOTS[name]` from results JSON (which the slide names)."
    if name not in PLOTS: raise BuildError(f'no plot {name!r}; plots: {", ".join(PLOTS)}')
    import matplotlib
    matplotlib.use('Agg')
    from matplotlib.figure import Figure
    f = Figure(figsize=kw.pop('size', (8, 4)), dpi=150, layout='constrained')
    PLOTS[name](f, **kw)
    tag = ''.join(f'-{v}' for v in kw.values()).replace('/', '-')  # the same plot of other results: its own file
    out = STAGE / 'figures' / f'{_CUR[0].deck}-{name}{tag}.png'
    out.parent.mkdir(parents=True, exist_ok=True)
    f.savefig(out)
    return f'![{caption}]({out}){{width={width}}}'


def _module_path(module:str) -> Path:
    p = ROOT / 'agentforge' / f'{module}.py'
    if not p.exists(): raise BuildError(f'no module agentforge/{module}.py')
    return p


def _trim(lines:list, n:int|None, where:str) -> list:
    if n is None or len(lines) <= n: return lines
    return lines[:n] + [f'# … {len(lines) - n} more lines in {where}']


def code(module:str, name:str, lines:int|None=None, start:int=0, doc:bool=True) -> str:
    """The source of `name` (a def, class, `Class.method` or assignment) in `agentforge/<module>.py`, as exported;
    `start` skips lines after the first (a long signature), `lines` cuts the excerpt, both marked in the code."""
    p = _module_path(module)
    text = p.read_text()
    src, body = text.splitlines(), ast.parse(text).body
    node = None
    for part in name.split('.'):
        node = next((n for n in body if getattr(n, 'name', None) == part or
                     (isinstance(n, (ast.Assign, ast.AnnAssign)) and
                      part in [getattr(t, 'id', None) for t in (n.targets if isinstance(n, ast.Assign) else [n.target])])),
                    None)
        if node is None: raise BuildError(f'agentforge/{module}.py has no {name!r} (a deck shows it)')
        body = getattr(node, 'body', [])
    first = min([node.lineno] + [d.lineno for d in getattr(node, 'decorator_list', [])])
    seg = src[first - 1:node.end_lineno]
    if not doc and isinstance(node, (ast.FunctionDef, ast.ClassDef)) and ast.get_docstring(node):
        d = node.body[0]
        seg = src[first - 1:d.lineno - 1] + src[d.end_lineno:node.end_lineno]
    nb = next((m.group(1) for line in reversed(src[:first]) if (m := re.match(r'# %% \.\./(nbs/\S+\.ipynb)', line))), None)
    seg = _trim(seg[start:] if not start else [seg[0], '    # …'] + seg[start:], lines, f'agentforge/{module}.py')
    origin = f'`agentforge/{module}.py`' + (f', exported from `{nb}`' if nb else '')
    return '```python\n' + '\n'.join(seg) + '\n```\n\n[' + origin + ']{.src}'


def _nb_cells(lesson:str) -> list:
    p = ROOT / 'nbs' / f'{lesson}.ipynb'
    if not p.exists(): raise BuildError(f'no lesson nbs/{lesson}.ipynb')
    return json.loads(p.read_text())['cells']


def cell(lesson:str, contains:str, lines:int|None=None) -> str:
    "A code cell of a lesson (the first that contains `contains`), without its `#|` directives."
    for c in _nb_cells(lesson):
        s = ''.join(c['source'])
        if c['cell_type'] == 'code' and contains in s:
            seg = [l for l in s.splitlines() if not l.startswith('#|')]
            seg = _trim(seg, lines, f'nbs/{lesson}.ipynb')
            return '```python\n' + '\n'.join(seg) + f'\n```\n\n[from `nbs/{lesson}.ipynb`]{{.src}}'
    raise BuildError(f'nbs/{lesson}.ipynb has no code cell containing {contains!r} (a deck shows it)')


def _cite_links(md:str, base:str='nbs') -> str:
    "Markdown links as citations: a deck links nothing, so `[text](../retros/x.md)` becomes text (`retros/x.md`)."
    def cite(m):
        url = m.group(2)
        if not re.match(r'^[a-z][a-z0-9+.-]*:', url, re.I): url = os.path.normpath(os.path.join(base, url))
        return f'{m.group(1)} (`{url}`)'
    return re.sub(r'(?<!!)\[([^\]]+)\]\(([^)\s]+)\)', cite, md)


def lesson_points(lesson:str, heading:str) -> str:
    """The list under a heading of a lesson's Markdown (`## Objectives`, `## Recap`, `**In this lesson you will**`),
    as written in the notebook: objectives and recaps stay the lesson's own."""
    for c in _nb_cells(lesson):
        if c['cell_type'] != 'markdown': continue
        s = ''.join(c['source'])
        m = re.search(r'(?m)^(?:#+\s*' + re.escape(heading) + r'|\*\*' + re.escape(heading) + r'\*\*)\s*$', s)
        if not m: continue
        rest = re.split(r'(?m)^#{1,3} ', s[m.end():])[0]
        items, cur = [], None
        for line in rest.splitlines():
            if re.match(r'^\s*(?:[-*]|\d+\.)\s+', line):
                cur = re.sub(r'^\s*(?:[-*]|\d+\.)\s+', '', line).strip()
                items.append(cur)
            elif cur is not None and line.startswith('  ') and line.strip():
                items[-1] += ' ' + line.strip()
            elif items and not line.strip(): cur = None
        if not items: continue
        _used(f'nbs/{lesson}.ipynb')
        return '\n'.join(f'- {_cite_links(i)}' for i in items)
    raise BuildError(f'nbs/{lesson}.ipynb has no list under {heading!r} (a deck shows it)')


def lesson_block(lesson:str, lang:str='text', lines:int|None=None) -> str:
    "The first fenced block of a language in a lesson's Markdown (a diagram, a shell session), as written there."
    for c in _nb_cells(lesson):
        if c['cell_type'] != 'markdown': continue
        m = re.search(r'(?ms)^```' + re.escape(lang) + r'\n(.*?)^```', ''.join(c['source']))
        if m:
            _used(f'nbs/{lesson}.ipynb')
            return f'```{lang}\n' + '\n'.join(_trim(m.group(1).rstrip('\n').splitlines(), lines, lesson)) + '\n```'
    raise BuildError(f'nbs/{lesson}.ipynb has no ```{lang} block (a deck shows it)')


def lesson_titles() -> list:
    "(name, title, summary) of every lesson, in course order, from each notebook's first heading and its blockquote."
    out = []
    for p in sorted((ROOT / 'nbs').glob('*.ipynb'), key=lambda p: (p.stem != 'index', p.stem)):
        for c in json.loads(p.read_text())['cells']:
            s = ''.join(c['source'])
            m = c['cell_type'] == 'markdown' and re.search(r'(?m)^#\s+(.+)$', s)
            if m:
                q = ' '.join(x.strip() for x in re.findall(r'(?m)^>\s?(.*)$', s))
                out.append((p.stem, m.group(1).strip(), q))
                break
    _used('nbs/*.ipynb')
    return out


def deck_list() -> list:
    "(name, title, lessons) of every deck."
    return [(d.name, d.meta['title'], d.meta.get('lessons', [])) for d in decks()]


def lesson_cells(lesson:str, contains:str) -> list:
    "The source of every code cell of a lesson that contains `contains` (for tables read from what a lesson runs)."
    found = [''.join(c['source']) for c in _nb_cells(lesson) if c['cell_type'] == 'code' and contains in ''.join(c['source'])]
    if not found: raise BuildError(f'nbs/{lesson}.ipynb has no code cell containing {contains!r} (a deck reads it)')
    _used(f'nbs/{lesson}.ipynb')
    return found


def findall(text:str, pattern:str) -> list:
    "Every match of a regular expression in `text` (its first group if it has one)."
    return re.findall(pattern, text)


def cell_value(lesson:str, name:str, env:dict|None=None):
    "The value a lesson's cell assigns to `name` (`name = <expression>`), evaluated here with `env`."
    for c in _nb_cells(lesson):
        if c['cell_type'] != 'code': continue
        s = ''.join(c['source'])
        try: tree = ast.parse(s)
        except SyntaxError: continue
        for n in tree.body:
            if isinstance(n, ast.Assign) and [getattr(t, 'id', None) for t in n.targets] == [name]:
                _used(f'nbs/{lesson}.ipynb')
                return eval(compile(ast.Expression(n.value), lesson, 'eval'), {'dict': dict, **(env or {})})
    raise BuildError(f'nbs/{lesson}.ipynb assigns no {name!r} (a deck reads it)')


def bank(lesson:str) -> list:
    "A lesson's quiz bank, `nbs/quizzes/<lesson>.yaml`."
    p = ROOT / 'nbs' / 'quizzes' / f'{lesson}.yaml'
    if not p.exists(): raise BuildError(f'no quiz bank nbs/quizzes/{lesson}.yaml')
    return yaml.safe_load(p.read_text())


def pick_questions(candidates:list, n:int) -> list:
    """Up to `n` questions from `candidates`, in order: `bank` (the bank's questions in file order) or `bank:id` (one
    question). A bank whose file does not exist is passed over (a lesson's own bank comes first; questions named
    from other banks stand in until it exists); a named id missing from an existing bank fails the build."""
    out = []
    for cand in candidates:
        name, _, qid = cand.partition(':')
        if not (ROOT / 'nbs' / 'quizzes' / f'{name}.yaml').exists(): continue
        qs = bank(name)
        if qid:
            q = next((q for q in qs if q['id'] == qid), None)
            if q is None: raise BuildError(f'nbs/quizzes/{name}.yaml has no question {qid!r} (a deck asks it)')
            qs = [q]
        for q in qs:
            if len(out) < n and q['id'] not in [o[1]['id'] for o in out]: out.append((name, q))
    if len(out) < 2: raise BuildError(f'fewer than 2 quiz questions found among {candidates}')
    return out


def _md_inline(text:str) -> str:
    return ' '.join(str(text).split())


def quiz_slides(candidates:list, n:int=3) -> str:
    "One slide per question (options lettered); the answer and every option's feedback in the speaker notes."
    parts = []
    for i, (name, q) in enumerate(pick_questions(candidates, n), 1):
        kind = q['type']
        body = [f'## Quiz {i}: check yourself', '', _md_inline(q['question']), '']
        notes = []
        if kind in ('single', 'multi'):
            letters = 'ABCDEFGH'
            body += ['::: {.quiz-options}', *[f'- **{letters[j]}.** {_md_inline(a["text"])}' for j, a in
                                             enumerate(q['answers'])], ':::']
            if kind == 'multi': body += ['', '*Select all that apply.*']
            right = [letters[j] for j, a in enumerate(q['answers']) if a['correct']]
            notes += [f"**Answer: {', '.join(right)}**", '']
            notes += [f"- {letters[j]} ({'right' if a['correct'] else 'wrong'}): {_md_inline(a['feedback'])}"
                      for j, a in enumerate(q['answers'])]
        elif kind == 'numeric':
            body.append('*Answer with a number.*')
            notes += [f"**Answer: {q['answer']}** (accepted within ± {q['tolerance']})", '', _md_inline(q['feedback'])]
        else:
            body.append('*Discussion: no single right answer.*')
            notes.append('For the instructor: ' + _md_inline(q.get('notes', '')))
        body += ['', f"[question `{q['id']}` from `nbs/quizzes/{name}.yaml`]{{.src}}", '', '::: notes', *notes, ':::', '']
        parts.append('\n'.join(body))
    return '\n'.join(parts)


# ---------------------------------------------------------------- filters

def f(x, spec:str='.3f') -> str:
    "Format a number (a minus sign, not a hyphen)."
    if isinstance(x, Data): raise BuildError(f'{x.src}{x.where} is not a number')
    return format(x, spec).replace('-', '−')


def ci(d, spec:str='+.3f') -> str:
    "`{mean, lo, hi}` as 'mean (95% CI lo to hi)'."
    return f"{f(d['mean'], spec)} (95% CI {f(d['lo'], spec)} to {f(d['hi'], spec)})"


def rng(values, spec:str='.2f') -> str:
    "The min–max range of some numbers ('a' when they are all equal)."
    v = sorted(values)
    sep = ' to ' if spec.startswith('+') or v[0] < 0 else '–'
    return f(v[0], spec) if f(v[0], spec) == f(v[-1], spec) else f'{f(v[0], spec)}{sep}{f(v[-1], spec)}'


def median(values):
    import statistics
    return statistics.median(list(values))


def spread(rows, by:str, within:str='brief', value:str='reward') -> float:
    "How far one knob moves the outcome: the largest range, over `within` groups, of the mean `value` per option of `by`."
    rows = rows.raw if isinstance(rows, Data) else rows
    out = 0.0
    for g in {r[within] for r in rows}:
        opts = {}
        for r in rows:
            if r[within] == g and r.get(value) is not None: opts.setdefault(r[by], []).append(r[value])
        means = [sum(v) / len(v) for v in opts.values()]
        if len(means) > 1: out = max(out, max(means) - min(means))
    return out


def default(fn, param:str):
    "The default value of a parameter of a library function or class (what a user gets without passing it)."
    import inspect
    p = inspect.signature(fn).parameters.get(param)
    if p is None or p.default is inspect.Parameter.empty: raise BuildError(f'{fn.__qualname__} has no default for {param!r}')
    return p.default


def pstdev(values):
    import statistics
    return statistics.pstdev([float(v) for v in values])


def mean(values):
    import statistics
    return statistics.mean(list(values))


# ---------------------------------------------------------------- figures drawn from results JSON

@_plot
def grid_lr(fig, path='results/grid/grid.json'):
    "Mean episode reward of the design space's specs by learning rate, per family."
    rows = load(path).raw
    lrs = sorted({r['learning_rate'] for r in rows}, key=float)
    fams = list(dict.fromkeys(r['brief'] for r in rows))
    ax = fig.subplots()
    w = 0.8 / len(lrs)
    for i, lr in enumerate(lrs):
        ys = [mean(r['reward'] for r in rows if r['brief'] == fam and r['learning_rate'] == lr) for fam in fams]
        ax.bar([j + (i - (len(lrs) - 1) / 2) * w for j in range(len(fams))], ys, w, label=f'lr {float(lr):g}')
    ax.set_xticks(range(len(fams)), [s.replace('_', '\n') for s in fams])
    ax.set(ylabel='mean episode reward (reference weights)', ylim=(0, 1))
    ax.legend(ncols=len(lrs), loc='upper left', fontsize=9)
    ax.grid(axis='y', alpha=0.3)
    ax.set_title(f'{len(rows)} specs of the scripted design space, each trained once through the pool', fontsize=10)


@_plot
def grid_speed(fig, path='results/grid/grid.json', budget:float=60.0):
    "Train seconds of the grid's inner jobs against the speed budget."
    rows = load(path).raw
    ax = fig.subplots()
    secs = sorted(r['train_seconds'] for r in rows)
    ax.hist(secs, bins=24, color='#4477aa')
    ax.axvline(budget, color='k', ls='--', lw=1)
    ax.text(budget, ax.get_ylim()[1] * 0.9, f' budget {budget:g} s', fontsize=9)
    ax.set(xlabel='train seconds of one inner job (tiny student)', ylabel='jobs')
    ax.set_title(f'{len(rows)} inner jobs of the design space: what the speed term measures', fontsize=10)


@_plot
def probe_rise(fig, path='results/outer/defaults-3seeds.json'):
    "The policy probe's P(good learning rate), first and last step, per seed: trained families and held-out."
    runs = load(path).raw['runs']
    axes = fig.subplots(1, 2, sharey=True)
    for ax, key, title in ((axes[0], 'probe_trained', 'trained families (mean)'), (axes[1], 'probe_held', 'held-out family')):
        for i, r in enumerate(runs):
            a, b = r[key]
            ax.plot([0, 1], [a, b], marker='o', label=f'seed {i}')
        ax.set_xticks([0, 1], ['before step 0', f'after step {runs[0]["steps"] - 1}'])
        ax.set_title(title, fontsize=10)
        ax.set(ylim=(0, 1))
        ax.grid(alpha=0.3)
    axes[0].set_ylabel('P(good learning rate) by teacher forcing')
    axes[1].legend(fontsize=9)


@_plot
def curve_changes(fig, path='results/outer/defaults-3seeds.json'):
    "Per seed: the fixed evaluation's paired last − first change and the held-out trained − untrained difference."
    runs = load(path).raw['runs']
    ax = fig.subplots()
    items = [('fixed eval, trained: last − first', 'curve_trained'), ('fixed eval, held-out: last − first', 'curve_held'),
             ('transfer, held-out: trained − untrained', 'transfer_diff')]
    for j, (label, key) in enumerate(items):
        for i, r in enumerate(runs):
            d = r[key]
            y = j * (len(runs) + 1) + i
            ax.errorbar(d['mean'], y, xerr=[[d['mean'] - d['lo']], [d['hi'] - d['mean']]], fmt='o', color=f'C{j}', capsize=3)
            ax.text(d['hi'], y, f'  seed {i}', va='center', fontsize=8)
    ax.axvline(0, color='k', lw=0.8)
    ax.set_yticks([j * (len(runs) + 1) + (len(runs) - 1) / 2 for j in range(len(items))], [t for t, _ in items])
    ax.invert_yaxis()
    ax.set(xlabel='mean episode reward difference, 95% bootstrap interval')
    ax.grid(axis='x', alpha=0.3)


@_plot
def knob_deltas(fig, folder='results/knobs', base=''):
    """Mean gain over its training seeds of every one-knob change of the heuristic spec minus the heuristic's, per
    family, ± 2 SE of the difference with training noise counted (lesson 12b's test, `landscape.knob_difference`);
    `base` ('level=3'): around the heuristic with those options (bench/knobs.py --base), else the plain heuristic."""
    ls = lib('landscape')
    around = dict(ls.knob_options(base))
    paths = [f'{folder}/{p.name}' for p in sorted(_path(folder).glob('knobs-*.json'))]  # bench/knobs.py: one per run
    if not paths:
        raise BuildError(f'{_CUR[0].deck}: slide "{_CUR[0].title}" needs {folder}/knobs-*.json (bench/knobs.py)')
    rows = [r for p in paths for r in load(p).raw if (r.get('base') or {}) == around]  # one base a plot
    opts = list(dict.fromkeys((r['knob'], r['option']) for r in rows if r['knob'] is not None))
    fams = list(dict.fromkeys(r['brief'] for r in rows))
    ax = fig.subplots()
    for j, fam in enumerate(fams):
        arms, sd = ls._arms(rows, fam, around), ls.train_sd(rows, fam, around) or 0.0
        start = arms.get((None, None))
        for i, (k, o) in enumerate(opts):
            rs = arms.get((k, o))
            if not (start and rs and all(r['validated'] for r in rs)): continue
            d, se = ls.knob_difference(rs, start, sd)
            y = i + (j - (len(fams) - 1) / 2) * 0.12
            ax.errorbar(d, y, xerr=2 * se, fmt='o', ms=3, color=f'C{j}', label=fam if i == 0 else None, lw=0.8)
    ax.axvline(0, color='k', lw=0.8)
    ax.set_yticks(range(len(opts)), [f'{k} = {o}' for k, o in opts], fontsize=8)
    ax.invert_yaxis()
    ax.set(xlabel='normalised gain minus the heuristic spec\'s (± 2 SE)')
    ax.legend(fontsize=7, ncols=3, loc='upper center', bbox_to_anchor=(0.5, -0.14))  # below: never over a row
    ax.grid(axis='x', alpha=0.3)


@_plot
def sandbox_view(fig):
    "What the agent's code sees inside bubblewrap on this machine, and what stays on the host (from agentforge.sandbox)."
    sb, tasks = lib('sandbox'), lib('tasks')
    L = sb.Limits()
    binds, links = sb.sandbox_binds()
    inside = [(f'{dst}', 'read-only bind') for _, dst in binds]
    inside += [(f'{path} -> {target}', 'symlink (merged /usr)') for target, path in links][:2]
    inside += [('/proc, /dev', 'new, read-only'), (f'/dev/shm', f'tmpfs {L.shm_bytes >> 20} MiB, writable'),
               ('/tmp', f'tmpfs {L.tmp_bytes >> 20} MiB, writable'), (sb.WORKSPACE, 'the spec, copied in, read-only'),
               (sb.HARNESS_PATH, 'our harness, read-only'), ('/', 'remounted read-only')]
    outside = [(str(tasks.data_dir()), 'platform secret, hidden splits'), (str(tasks.cache_dir()), 'students, inner results'),
               ('the repository, /home, /root', 'never bound'), ('the network', 'new net namespace: no interfaces'),
               ('other processes', 'new pid namespace'), ('fork / clone', 'refused by seccomp (threads allowed)')]
    ax = fig.subplots()
    ax.set_axis_off()
    ax.set(xlim=(0, 2), ylim=(0, max(len(inside), len(outside)) + 1.6))
    for x, title, rows, col in ((0.02, 'inside the sandbox', inside, '#e8f1fb'), (1.02, 'host only: never visible', outside, '#fbe9e7')):
        top = ax.get_ylim()[1] - 0.4
        ax.text(x, top, title, fontsize=11, weight='bold', va='center')
        for i, (path, what) in enumerate(rows):
            y = top - 1 - i
            ax.add_patch(matplotlib_patch(x, y - 0.42, 0.94, 0.84, col))
            ax.text(x + 0.02, y, path if len(path) < 34 else '…' + path[-33:], fontsize=8.5, family='monospace', va='center')
            ax.text(x + 0.92, y, what, fontsize=8, va='center', ha='right', color='#333')


def matplotlib_patch(x, y, w, h, colour):
    from matplotlib.patches import FancyBboxPatch
    return FancyBboxPatch((x, y), w, h, boxstyle='round,pad=0.005', fc=colour, ec='#99a', lw=0.6)


@_plot
def reward_vs_gain(fig):
    "The reference weights' total over raw gain, one line per attempt (computed with agentforge.grading)."
    g = lib('grading')
    gains = [round(-0.25 + i / 40, 3) for i in range(39)]
    ax = fig.subplots()
    for a in (1, 2, 3, None):
        ys = [g.episode_reward(a).total if a is None else
              g.episode_reward(a, 0.30, min(1.0, max(0.0, 0.30 + x)), train_seconds=900).total for x in gains]
        ax.plot(gains, ys, label='never validated' if a is None else f'validated on attempt {a}')
    ax.axvline(0, color='grey', lw=0.8)
    ax.set(xlabel='raw gain post − pre (pre = 0.30, half the time budget)', ylabel='episode reward (reference)', ylim=(-0.02, 1))
    ax.legend(fontsize=9)
    ax.grid(alpha=0.3)


# ---------------------------------------------------------------- decks

def split_slides(md:str) -> list:
    "Split Markdown before each `# ` or `## ` heading line that is not inside a fenced code block."
    out, cur, fence = [], [], None
    for line in md.splitlines(keepends=True):
        m = re.match(r'^(`{3,}|~{3,})', line)
        if m and (fence is None or m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence)):
            fence = m.group(1) if fence is None else None
        elif fence is None and re.match(r'^#{1,2} ', line) and cur:
            out.append(''.join(cur))
            cur = []
        cur.append(line)
    out.append(''.join(cur))
    return out


class Deck:
    "One deck source: its front matter and its slides (split before rendering, so each slide is rendered alone)."
    def __init__(self, path:Path):
        self.path, text = path, path.read_text()
        m = re.match(r'^---\n(.*?)\n---\n', text, re.S)
        if not m: raise BuildError(f'{path.name}: no YAML front matter')
        self.meta, body = yaml.safe_load(m.group(1)), text[m.end():]
        self.name = self.meta.get('deck') or path.stem.split('-', 1)[-1]
        self.chunks = split_slides(body)

    def __repr__(self): return f'Deck({self.name}: {self.meta.get("title")})'


def _env():
    import jinja2
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False,
                             comment_start_string='<#', comment_end_string='#>')
    env.globals.update(load=load, demo_dir=demo_dir, exists=exists, lib=lib, const=const, fig=fig, plot=plot, code=code, cell=cell,
                       cell_value=cell_value, lesson_points=lesson_points, lesson_block=lesson_block, lesson_cells=lesson_cells, lesson_titles=lesson_titles, deck_list=deck_list, bank=bank, quiz=quiz_slides, median=median, mean=mean, pstdev=pstdev, default=default, spread=spread, rng=rng, f=f,
                       ci=ci, sorted=sorted, max=max, min=min, len=len, round=round, abs=abs, sum=sum, zip=zip,
                       enumerate=enumerate, list=list, dict=dict)
    env.filters.update(f=f, ci=ci, rng=rng, findall=findall)
    return env


def _with_footer(md:str, sources:list) -> str:
    "Put the sources line at the end of the slide's content, before its speaker notes."
    if not sources: return md
    libs = [s.rsplit(' ', 1)[1] for s in sources if s.startswith('computed at build time with ')]
    files = [f'`{s}`' for s in sources if not s.startswith('computed at build time with ')]
    parts = files + ([f"computed at build time with {', '.join(libs)}"] if libs else [])
    line = '\n[Source: ' + ' · '.join(parts) + ']{.src}\n\n'
    i = md.find('\n::: notes')
    return md.rstrip() + '\n' + line if i < 0 else md[:i].rstrip() + '\n' + line + md[i:]


def render(deck:Deck) -> str:
    "The deck's Markdown with every helper evaluated, sources named, and every slide checked for notes."
    import jinja2
    env, out = _env(), []
    for chunk in deck.chunks:
        if not chunk.strip(): continue
        title = chunk.splitlines()[0].lstrip('# ').strip()
        _CUR[0] = Slide(deck.name, title)
        try: md = env.from_string(chunk).render()
        except BuildError: raise
        except jinja2.TemplateError as e: raise BuildError(f'{deck.path.name}: slide "{title}": {e}') from e
        finally: slide, _CUR[0] = _CUR[0], None
        out.append(_with_footer(md, slide.sources))
    if deck.meta.get('quiz'):
        out.append(quiz_slides(deck.meta['quiz'], deck.meta.get('quiz_n', 3)))
    md = '\n'.join(out)
    for s in split_slides(md):
        if s.strip() and '::: notes' not in s:
            raise BuildError(f'{deck.path.name}: slide "{s.splitlines()[0]}" has no speaker notes (::: notes)')
    return md


def stage_reveal() -> Path:
    "reveal.js's files the template loads, with the white theme minus its web font (system fonts only)."
    if not (REVEAL / 'dist' / 'reveal.js').exists():
        raise BuildError(f'reveal.js is not installed in {REVEAL}: run `make slides` (npm ci in slides/)')
    dst = STAGE / 'reveal'
    for rel in REVEAL_FILES:
        (dst / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REVEAL / rel, dst / rel)
    theme = (REVEAL / 'dist' / 'theme' / 'white.css').read_text()
    theme, n = re.subn(r'@import url\([^)]*fonts/[^)]*\);\s*', '', theme)
    if n != 1: raise BuildError('reveal.js white theme: expected one font @import to remove')
    (dst / 'dist' / 'theme').mkdir(parents=True, exist_ok=True)
    (dst / 'dist' / 'theme' / 'agentforge.css').write_text(theme)
    return dst


def pandoc_path() -> str:
    import pypandoc
    return pypandoc.get_pandoc_path()


def to_html(deck:Deck, md:str, reveal:Path, out:Path) -> Path:
    "pandoc Markdown → one self-contained reveal.js HTML file."
    src = STAGE / f'{deck.name}.md'
    meta = {k: deck.meta[k] for k in ('title', 'subtitle', 'author', 'date') if k in deck.meta}
    src.write_text('---\n' + yaml.safe_dump(meta, allow_unicode=True) + '---\n\n' + md)
    dest = out / f'{deck.name}.html'
    cmd = [pandoc_path(), str(src), '-s', '-t', 'revealjs', '--embed-resources', '--mathml', '--slide-level=2',
           '-V', f'revealjs-url={reveal}', '-V', 'theme=agentforge', '-V', 'width=1280', '-V', 'height=720',
           '-V', 'margin=0.04', '-V', 'center=false', '-V', 'transition=none', '-V', "slideNumber='c/t'", '-V', 'hash=true',
           '--css', str(SLIDES / 'deck.css'), '--resource-path', str(ROOT), '-o', str(dest)]
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if p.returncode != 0: raise BuildError(f'pandoc failed on {deck.name}: {p.stderr[-2000:]}')
    remote = remote_assets(dest.read_text())
    if remote: raise BuildError(f'{dest.name} names remote assets: {remote[:5]}')
    return dest


def decks() -> list[Deck]:
    "Every deck, in file order."
    return [Deck(p) for p in sorted(DECKS.glob('*.md'))]


def index_html(built:list, out:Path) -> Path:
    "`_slides/index.html`: the decks, with their lessons and slide counts."
    rows = ''.join(f'<tr><td><a href="{d.name}.html">{html.escape(d.meta["title"])}</a></td>'
                   f'<td>{html.escape(d.meta.get("subtitle", ""))}</td><td>{", ".join(d.meta.get("lessons", []))}</td>'
                   f'<td>{n}</td></tr>' for d, n in built)
    page = ('<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>agentforge decks</title><style>'
            'body{font-family:system-ui,sans-serif;max-width:980px;margin:2rem auto;color:#222}td,th{border:1px solid #ccc;'
            'padding:.3rem .6rem;text-align:left}table{border-collapse:collapse}</style></head><body>'
            '<h1>agentforge: the decks</h1><p>Each deck is one HTML file that opens from disk with no network. Keys: '
            '<kbd>S</kbd> speaker notes, <kbd>F</kbd> full screen, <kbd>Esc</kbd> overview, <kbd>?</kbd> all keys. '
            f'The course site is <a href="../_site/index.html">_site/index.html</a> (<code>make docs</code>).</p>'
            f'<table><tr><th>deck</th><th>what</th><th>lessons</th><th>slides</th></tr>{rows}</table>'
            f'<p>Built {time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())} by <code>make slides</code>.</p></body></html>\n')
    dest = out / 'index.html'
    dest.write_text(page)
    return dest


def build(names:list|None=None, out:Path=OUT, stage:Path|None=None, log=print) -> list[Path]:
    "Build the named decks (all by default) into `out`, staging files in `stage`; the files written."
    global STAGE
    if stage is not None: STAGE = Path(stage)
    all_decks = decks()
    chosen = [d for d in all_decks if not names or d.name in names or d.path.stem in names]
    unknown = set(names or []) - {d.name for d in all_decks} - {d.path.stem for d in all_decks}
    if unknown: raise BuildError(f'no deck {", ".join(sorted(unknown))}; decks: {", ".join(d.name for d in all_decks)}')
    STAGE.mkdir(parents=True, exist_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    reveal = stage_reveal()
    written, built = [], []
    for d in chosen:
        t0 = time.time()
        md = render(d)
        dest = to_html(d, md, reveal, out)
        n = len([c for c in split_slides(md) if c.strip()]) + 1
        built.append((d, n))
        written.append(dest)
        log(f'  {dest.resolve().relative_to(ROOT) if dest.resolve().is_relative_to(ROOT) else dest}: {n} slides, '
            f'{dest.stat().st_size / 1e6:.1f} MB, {time.time() - t0:.1f} s')
    if not names: written.append(index_html(built, out))
    return written


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('decks', nargs='*', help='deck names (default: all)')
    ap.add_argument('--out', default=str(OUT), help='output folder (default _slides/)')
    ap.add_argument('--list', action='store_true', help='list the decks and exit')
    a = ap.parse_args(argv)
    if a.list:
        for d in decks(): print(f'{d.name:<22} {d.meta["title"]}  ({", ".join(d.meta.get("lessons", []))})')
        return
    t0 = time.time()
    try: files = build(a.decks, Path(a.out))
    except BuildError as e: sys.exit(f'make slides FAILED: {e}')
    print(f'slides: {len(files)} files in {a.out} ({time.time() - t0:.0f} s)')


if __name__ == '__main__':
    main()

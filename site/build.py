"""Build the course site: every lesson executed on CPU, rendered with its outputs to static HTML that opens offline.

    python site/build.py                 # execute what changed (cached), render everything into _site/
    python site/build.py --only 01_grading 02_tasks --jobs 2
    python site/build.py --force         # execute every lesson again

How a lesson runs: exactly as `nbdev-test` runs it (nbdev's own `nb_test_cells` picks the cells, execnb's
`CaptureShell` runs them in the notebook's folder, one fresh process per lesson), except that the outputs are
kept, in a copy under `build/site/executed/` (the committed notebooks in `nbs/` are only read). Cells that
nbdev-test skips (`#| gpu`, `#| slow`, `#| llm`, `#| eval: false`) are not executed and are marked on the page
"not run" with the reason. An executed copy is reused while its key holds (the notebook, the library source
`agentforge/*.py`, the quiz banks, `pyproject.toml` and this file's EXEC_VERSION).

A lesson that fails is still rendered (its outputs up to the failing cell, then its error, and a banner saying so),
counted and listed on the home page, and the build exits with status 1 naming it: never a page without outputs
passed off as a lesson.

Offline by construction: JupyterLab's CSS is inlined, images are embedded, math is converted to MathML at build
time (pandoc from the `pypandoc-binary` wheel), and require.js, MathJax, mermaid and the widget manager, which
nbconvert's template loads from CDNs, are left out; `slides/offline.py` checks every page before the build ends.
"""
import argparse, concurrent.futures as cf, hashlib, html, json, os, re, shutil, subprocess, sys, time
from pathlib import Path

# nbformat imports jsonschema, which compiles 39 Lark grammars of `rfc3987_syntax` at import when that package is
# installed (seconds on a busy 2-core machine), only to check "iri" string formats no notebook schema uses: skip it.
sys.modules.setdefault('rfc3987_syntax', None)

ROOT = Path(__file__).resolve().parents[1]
SITE_SRC = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / 'slides'))
from offline import scan_tree  # noqa: E402

EXEC_VERSION = 1  # bump when the way lessons are executed changes: every cached execution is redone
FLAG_REASONS = {
    'gpu': 'needs a GPU (cell flag gpu); run it with nbdev-test --flags gpu on a CUDA machine',
    'slow': 'slow on a CPU (cell flag slow: over ~30 s); run it with nbdev-test --flags slow',
    'llm': 'calls a served model (cell flag llm); run it with nbdev-test --flags llm where one is served',
}


def page(stem:str) -> str:
    "The page a lesson renders to: `index.ipynb` (the course map) becomes `course.html`, the home page is `index.html`."
    return 'course.html' if stem == 'index' else f'{stem}.html'


def lessons(nbs:Path=ROOT / 'nbs') -> list[Path]:
    "Every lesson notebook in course order: the course map (`index`) first, then by name."
    nbs = sorted(nbs.glob('*.ipynb'))
    return sorted(nbs, key=lambda p: (p.stem != 'index', p.stem))


def exec_key(nb:Path) -> str:
    "Hash of what a lesson's outputs depend on: the notebook, the library, the quiz banks, the install, this builder."
    h = hashlib.sha256(f'exec-v{EXEC_VERSION}'.encode())
    parts = [nb, ROOT / 'pyproject.toml', *sorted((ROOT / 'agentforge').glob('*.py')),
             *sorted((ROOT / 'nbs' / 'quizzes').glob('*'))]
    for p in parts:
        h.update(p.name.encode() + b'\0' + p.read_bytes() + b'\0')
    return h.hexdigest()


# ---------------------------------------------------------------- executing one lesson (in its own process)

def _not_run_reason(cell, flags, skip_exec:bool) -> str:
    "Why nbdev-test does not execute this code cell."
    if skip_exec: return 'the lesson is marked skip_exec'
    d = getattr(cell, 'directives_', {}) or {}
    hit = [f for f in flags if f in d]
    if hit: return FLAG_REASONS.get(hit[0], f'cell flag {hit[0]}')
    if 'eval' in d: return 'marked #| eval: false: shown, never executed'
    return 'skipped by nbdev-test'


def execute(src:Path, dest:Path, meta:Path):
    "Run lesson `src` as nbdev-test does, write the executed copy to `dest` and what happened to `meta` (JSON)."
    from execnb.shell import CaptureShell
    from fastcore.nbio import read_nb, write_nb
    from nbdev.config import get_config
    from nbdev.frontmatter import nb_frontmatter
    from nbdev.process import NBProcessor
    from nbdev.test import nb_test_cells
    from fastcore.basics import str2bool
    from fastcore.xtras import working_directory
    cfg = get_config(ROOT)  # the project's nbdev settings (test flags, cell timeout), wherever the notebook lies
    flags = cfg.tst_flags.split() if isinstance(cfg.tst_flags, str) else list(cfg.tst_flags)
    processed = NBProcessor(src, rm_directives=False, process=True).nb
    skip_exec = str2bool(nb_frontmatter(processed).get('skip_exec', False))
    run = {c.idx_ for c in nb_test_cells(src, flags)}
    nb = read_nb(src)
    reasons = {c.idx_: _not_run_reason(c, flags, skip_exec) for c in processed.cells
               if c.cell_type == 'code' and c.idx_ not in run}
    for c in nb.cells:
        if c.cell_type == 'code': c.outputs, c.execution_count = [], None
    t0, error, failed_idx = time.time(), None, None
    sys.path.insert(0, str(cfg.config_path))
    shell = CaptureShell(src)
    try:
        with working_directory(src.parent):
            shell.run_all(nb, exc_stop=True, preproc=lambda c: c.idx_ not in run, cell_timeout=cfg.cell_timeout or None)
    except BaseException as e:  # noqa: BLE001 - any failure of the lesson is reported, with its traceback
        error = shell.prettytb(fname=src) or f'{type(e).__name__}: {e}'
        failed_idx = next((c.idx_ for c in nb.cells if c.cell_type == 'code' and c.idx_ in run and
                           any(o.get('output_type') == 'error' for o in c.get('outputs', []))), None)
    seconds = time.time() - t0
    counts = {'run': 0, 'not_run': 0, 'after_failure': 0}
    for c in nb.cells:
        if c.cell_type != 'code': continue
        took = c.metadata.pop('execution', {}).get('total')  # execnb's float breaks nbformat's schema (strings)
        if took is not None: c.metadata['agentforge_site'] = {'seconds': round(took, 3)}
        if c.idx_ in reasons:
            c.metadata['agentforge_site'] = {'not_run': reasons[c.idx_]}
            counts['not_run'] += 1
        elif error and c.execution_count is None:
            c.metadata['agentforge_site'] = {'not_run': 'an earlier cell failed'}
            counts['after_failure'] += 1
        else: counts['run'] += 1
    dest.parent.mkdir(parents=True, exist_ok=True)
    write_nb(nb, dest)
    meta.write_text(json.dumps({
        'lesson': src.stem, 'key': exec_key(src), 'ok': error is None, 'seconds': round(seconds, 1),
        'cells': counts, 'not_run': sorted(set(reasons.values())), 'failed_cell': failed_idx,
        'error': error, 'leaks': len(getattr(shell, 'leaks', []) or [])}, indent=1))
    return error is None


def _execute_in_process(nb:Path, work:Path, timeout:float|None) -> dict:
    "Execute one lesson in a fresh Python process (as nbdev-test does, one process per notebook); its meta."
    dest, meta = work / f'{nb.stem}.ipynb', work / f'{nb.stem}.json'
    meta.unlink(missing_ok=True)
    cmd = [sys.executable, str(Path(__file__).resolve()), '--execute-one', str(nb), str(dest), str(meta)]
    t0 = time.time()
    try:
        p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
        out = (p.stdout + p.stderr)[-4000:]
    except subprocess.TimeoutExpired as e:
        out = f'the lesson ran past the build limit of {timeout:.0f} s\n' + str(e.stdout or '')[-2000:]
    if meta.exists(): return json.loads(meta.read_text())
    # the process died before writing its meta: the lesson is failed, with what the process said
    return {'lesson': nb.stem, 'key': None, 'ok': False, 'seconds': round(time.time() - t0, 1), 'cells': {},
            'not_run': [], 'failed_cell': None, 'error': out or 'the executing process died without a word'}


def execute_all(nbs:list[Path], work:Path, jobs:int=1, force:bool=False, timeout:float|None=None,
                log=print) -> dict[str, dict]:
    "Execute every lesson whose cached copy is missing or stale; the meta of every lesson, by name."
    work.mkdir(parents=True, exist_ok=True)
    metas, todo = {}, []
    for nb in nbs:
        mp = work / f'{nb.stem}.json'
        m = json.loads(mp.read_text()) if mp.exists() else None
        if not force and m and m.get('key') == exec_key(nb) and (work / f'{nb.stem}.ipynb').exists():
            metas[nb.stem] = {**m, 'cached': True}
        else: todo.append(nb)
    if todo: log(f'executing {len(todo)} lesson(s) with {jobs} job(s); {len(metas)} cached')
    with cf.ThreadPoolExecutor(max_workers=max(1, jobs)) as ex:
        futs = {ex.submit(_execute_in_process, nb, work, timeout): nb for nb in todo}
        for f in cf.as_completed(futs):
            m = f.result()
            metas[m['lesson']] = {**m, 'cached': False}
            log(f"  {'ok    ' if m['ok'] else 'FAILED'} {m['lesson']:<16} {m['seconds']:7.1f} s  "
                f"cells run {m['cells'].get('run', 0)}, not run {m['cells'].get('not_run', 0)}")
    return metas


# ---------------------------------------------------------------- rendering

_PANDOC = None
_MATH_CACHE: dict = {}


def tex_to_mathml(tex:str, display:bool) -> str:
    "TeX math as a MathML element (pandoc --mathml), cached; raises when pandoc fails."
    global _PANDOC
    key = (tex, display)
    if key in _MATH_CACHE: return _MATH_CACHE[key]
    if _PANDOC is None:
        import pypandoc
        _PANDOC = pypandoc.get_pandoc_path()
    src = f'$${tex}$$' if display else f'${tex}$'
    p = subprocess.run([_PANDOC, '-f', 'markdown', '-t', 'html', '--mathml'], input=src, capture_output=True,
                       text=True, check=True)
    m = re.search(r'<math.*</math>', p.stdout, re.S)
    if not m: raise ValueError(f'pandoc made no MathML of {src!r}: {p.stdout!r}')
    _MATH_CACHE[key] = m.group(0)
    return m.group(0)


def site_href(url:str, stems:set, retros:set, base:str='nbs', page_dir:str='_site') -> str:
    "A link written relative to `base` (a repo folder), rewritten for a page in `page_dir`: lessons and retros to their pages."
    if re.match(r'^([a-z][a-z0-9+.-]*:|#|/)', url, re.I): return url
    path, frag = (url.split('#', 1) + [''])[:2]
    frag = f'#{frag}' if frag else ''
    target = os.path.normpath(os.path.join(base, path))
    stem = Path(target).stem
    if os.path.dirname(target) == 'nbs' and target.endswith('.ipynb') and stem in stems: target = f'_site/{page(stem)}'
    elif os.path.dirname(target) == 'retros' and target.endswith('.md') and stem in retros:
        target = f'_site/retros/{stem}.html'
    return os.path.relpath(target, page_dir).replace(os.sep, '/') + frag


def make_renderer(stems:set, retros:set, base:str='nbs', page_dir:str='_site', **kw):
    "nbconvert's Markdown renderer with math as MathML, mermaid shown as source, and links fixed for the site."
    from nbconvert.filters.markdown_mistune import IPythonRenderer

    class SiteRenderer(IPythonRenderer):
        def block_math(self, body): return tex_to_mathml(body, True)
        def multiline_math(self, text): return tex_to_mathml(text.strip().strip('$'), True)
        def latex_environment(self, name, body): return tex_to_mathml(f'\\begin{{{name}}}{body}\\end{{{name}}}', True)
        def inline_math(self, body): return tex_to_mathml(body, False)
        def block_mermaidjs(self, code):
            return ('<div class="af-mermaid"><div class="af-mermaid-note">a Mermaid flowchart (rendered on GitHub '
                    'and in JupyterLab; shown here as its source)</div><pre>' + html.escape(code.strip()) + '</pre></div>')
        def link(self, text, url, title=None): return super().link(text, site_href(url, stems, retros, base, page_dir), title)
        # nbconvert embeds images in raw HTML by re-parsing each HTML block with BeautifulSoup, which closes an open
        # `<details>` at once (a quiz's folded answer then shows unfolded): only blocks with an image take that path
        def block_html(self, html):
            return super().block_html(html) if '<img' in html else super(IPythonRenderer, self).block_html(html)
        def inline_html(self, html):
            return super().inline_html(html) if '<img' in html else super(IPythonRenderer, self).inline_html(html)

    return SiteRenderer(escape=False, **kw)


def markdown_html(source:str, stems:set, retros:set, base:str, page_dir:str) -> str:
    "Markdown written in repo folder `base` as HTML for a page in `page_dir`, the way a lesson's cells are rendered."
    from nbconvert.filters.markdown_mistune import MarkdownWithMath
    r = make_renderer(stems, retros, base, page_dir, path=str(ROOT / base), embed_images=True)
    return MarkdownWithMath(renderer=r).render(source)


def make_exporter(stems:set, retros:set):
    "nbconvert's HTMLExporter (JupyterLab's template) with our offline template and Markdown renderer."
    from nbconvert import HTMLExporter
    from nbconvert.exporters.html import contextfilter
    from nbconvert.filters.markdown_mistune import MarkdownWithMath

    class SiteExporter(HTMLExporter):
        @contextfilter
        def markdown2html(self, context, source):
            cell = context.get('cell', {})
            path = context.get('resources', {}).get('metadata', {}).get('path', '')
            r = make_renderer(stems, retros, attachments=cell.get('attachments', {}), embed_images=True, path=path,
                              anchor_link_text=self.anchor_link_text)
            return MarkdownWithMath(renderer=r).render(source)

    return SiteExporter(template_name='agentforge', extra_template_basedirs=[str(SITE_SRC / 'templates')],
                        embed_images=True)


WIDGET = 'application/vnd.jupyter.widget-view+json'
WIDGET_NOTE = ('<div class="af-widget">An interactive widget: open this notebook in JupyterLab to use it '
               '(the site has no kernel).</div>')


def static_outputs(nb):
    "Replace widget views (which need a kernel) by their static fallback, or by a note when there is none."
    for c in nb.cells:
        for o in c.get('outputs', []):
            data = o.get('data', {})
            if WIDGET not in data: continue
            data.pop(WIDGET)
            if set(data) <= {'text/plain'}: o['data'] = {'text/html': WIDGET_NOTE}
    return nb


def lesson_title(nb) -> tuple[str, str]:
    "A lesson's title (its first heading) and summary (the blockquote under it)."
    for c in nb.cells:
        if c.cell_type != 'markdown': continue
        m = re.search(r'^#\s+(.+)$', c.source, re.M)
        if not m: continue
        q = re.findall(r'^>\s?(.*)$', c.source, re.M)
        return m.group(1).strip(), ' '.join(s.strip() for s in q).strip()
    return '', ''


LINK_CODE = re.compile(r'<code>(?:nbs/)?(\w+)(?:\.ipynb)?</code>')


def autolink(text:str, stems:set, me:str, prefix:str='') -> str:
    "Turn `<code>01_grading</code>` (a lesson's name, outside links) into a link to its page."
    out, last = [], 0
    for m in LINK_CODE.finditer(text):
        if m.group(1) not in stems or m.group(1) == me: continue
        before = text[:m.start()]
        if before.rfind('<a ') > before.rfind('</a>'): continue  # already inside a link
        out += [text[last:m.start()], f'<a class="af-lesson" href="{prefix}{page(m.group(1))}">{m.group(0)}</a>']
        last = m.end()
    return ''.join(out) + text[last:]


def nav_html(stems:list, i:int, meta:dict) -> str:
    "The bar above and below a lesson: home, previous, next, the notebook, and how the page was made."
    prev = f'<a href="{page(stems[i - 1])}">&larr; {stems[i - 1]}</a>' if i > 0 else ''
    nxt = f'<a href="{page(stems[i + 1])}">{stems[i + 1]} &rarr;</a>' if i + 1 < len(stems) else ''
    c = meta.get('cells', {})
    made = (f"executed on CPU at build time in {meta.get('seconds', 0):.0f} s: {c.get('run', 0)} code cells run"
            + (f", {c['not_run']} not run (marked)" if c.get('not_run') else '')
            + ('' if meta.get('ok') else ', FAILED'))
    return (f'<nav class="af-nav"><a href="index.html">agentforge course</a><span>{prev}</span><span>{nxt}</span>'
            f'<a href="../nbs/{stems[i]}.ipynb">notebook</a><span class="af-made">{made}</span></nav>')


def banner_html(meta:dict) -> str:
    "A failed lesson says so at the top of its page."
    if meta.get('ok'): return ''
    err = re.sub(r'\x1b\[[0-9;]*m', '', meta.get('error') or '')
    return ('<div class="af-failed"><strong>This lesson failed to execute when the site was built.</strong> Its outputs '
            'stop at the failing cell; later cells are marked not run.<pre>' + html.escape(err[-3000:]) + '</pre></div>')


def render_lesson(exporter, executed:Path, stems:list, i:int, meta:dict, css:str, executed_src:Path) -> str:
    "One lesson page (`executed_src`: the lesson's own notebook, whose folder its relative images are read from)."
    import nbformat
    nb = static_outputs(nbformat.read(executed, as_version=4))
    res = {'metadata': {'path': str(Path(executed_src).parent), 'name': stems[i]},
           'af': {'css': css, 'nav': nav_html(stems, i, meta), 'banner': banner_html(meta)}}
    doc, _ = exporter.from_notebook_node(nb, resources=res)
    title = lesson_title(nb)[0] or stems[i]
    doc = re.sub(r'<title>.*?</title>', f'<title>{html.escape(title)} · agentforge</title>', doc, count=1, flags=re.S)
    return autolink(doc, set(stems), stems[i])


def _front_matter(text:str) -> tuple[dict, str]:
    "A retro's YAML front matter and its body."
    import yaml
    m = re.match(r'^---\n(.*?)\n---\n', text, re.S)
    return (yaml.safe_load(m.group(1)) or {}, text[m.end():]) if m else ({}, text)


def page_html(title:str, body:str, css:str) -> str:
    "A plain page of the site (home, retros) in the site's style."
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" '
            f'content="width=device-width, initial-scale=1"><title>{html.escape(title)}</title>'
            f'<style>{css}</style></head><body class="af-page"><main>{body}</main></body></html>\n')


def retro_files() -> list[Path]:
    "The retros: `retros/YYYY-MM-DD-slug.md` (not the folder's README index)."
    return sorted(p for p in (ROOT / 'retros').glob('*.md') if re.match(r'\d{4}-\d{2}-\d{2}-', p.name))


def render_retros(out:Path, stems:set, css:str) -> list[dict]:
    "Every retro as a page under `retros/`; their front matter for the home page."
    files = retro_files()
    rows, names = [], {p.stem for p in files}
    (out / 'retros').mkdir(parents=True, exist_ok=True)
    for p in files:
        fm, body = _front_matter(p.read_text())
        body_html = markdown_html(body, stems, names, 'retros', '_site/retros')
        head = ''.join(f'<tr><th>{html.escape(str(k))}</th><td>{html.escape(str(v))}</td></tr>' for k, v in fm.items())
        title = str(fm.get('title', p.stem))
        doc = (f'<nav class="af-nav"><a href="../index.html">agentforge course</a><a href="index.html">retros</a></nav>'
               f'<h1>{html.escape(title)}</h1><table class="af-fm">{head}</table>{body_html}')
        (out / 'retros' / f'{p.stem}.html').write_text(autolink(page_html(title, doc, css), stems, '', '../'))
        rows.append({'stem': p.stem, **{k: fm.get(k, '') for k in ('title', 'date', 'lesson', 'severity', 'status')}})
    items = ''.join(f'<tr><td>{r["date"]}</td><td><a href="{r["stem"]}.html">{html.escape(str(r["title"]))}</a></td>'
                    f'<td>{html.escape(str(r["lesson"]))}</td><td>{r["severity"]}</td><td>{r["status"]}</td></tr>'
                    for r in rows)
    (out / 'retros' / 'index.html').write_text(page_html('agentforge retros', (
        '<nav class="af-nav"><a href="../index.html">agentforge course</a></nav><h1>Failure retros</h1>'
        '<table class="af-table"><tr><th>date</th><th>retro</th><th>lesson</th><th>severity</th><th>status</th></tr>'
        f'{items}</table>'), css))
    return rows


def render_home(out:Path, nbs:list[Path], metas:dict, titles:dict, retros:list, css:str) -> None:
    "The home page: every lesson with what its build did, the retros, the decks."
    rows = []
    for nb in nbs:
        m, (title, summary) = metas[nb.stem], titles[nb.stem]
        c = m.get('cells', {})
        state = ('<span class="af-ok">ran</span>' if m.get('ok') else '<span class="af-bad">FAILED</span>')
        notes = ', '.join(html.escape(r.split(' (')[0].split(';')[0]) for r in m.get('not_run', []))
        summ = re.sub(r'^<p>|</p>\s*$', '', markdown_html(summary, set(), set(), 'nbs', '_site').strip())
        label = 'index</code> (the course map)<code>' if nb.stem == 'index' else nb.stem
        rows.append(f'<tr><td><a href="{page(nb.stem)}"><code>{label}</code></a></td><td><strong>{html.escape(title)}'
                    f'</strong><br><span class="af-sum">{summ}</span></td><td>{state}</td>'
                    f'<td>{c.get("run", 0)}</td><td>{c.get("not_run", 0) or ""}'
                    f'{"<br><span class=af-sum>" + notes + "</span>" if notes else ""}</td>'
                    f'<td>{m.get("seconds", 0):.0f} s</td></tr>')
    failed = [n for n, m in metas.items() if not m.get('ok')]
    status = (f'<p class="af-bad">{len(failed)} lesson(s) failed to execute: {", ".join(failed)}.</p>' if failed else
              f'<p>All {len(nbs)} lessons executed on CPU when this site was built; cells that need a GPU, a served '
              'model or a long CPU run are shown and marked <em>not run</em>.</p>')
    decks = ROOT / '_slides' / 'index.html'
    slides = ('<p>Slides for instructors: <a href="../_slides/index.html">the decks</a> (built by <code>make slides</code>).'
              '</p>' if decks.exists() else '<p>Slides for instructors: run <code>make slides</code> (into <code>_slides/</code>).</p>')
    body = ('<h1>agentforge: the course</h1><p class="af-sum">An agent writes reinforcement-learning training tasks for a '
            'small model, and is itself RL-trained on how much those tasks improve that model on a hidden eval.</p>'
            f'{status}{slides}<h2>Lessons</h2><table class="af-table"><tr><th>lesson</th><th>what it teaches</th>'
            f'<th>build</th><th>cells run</th><th>not run</th><th>time</th></tr>{"".join(rows)}</table>'
            f'<h2>Failure retros</h2><p><a href="retros/index.html">{len(retros)} retros</a>: what broke when this '
            'project\'s code ran, and what we changed.</p>'
            f'<p class="af-sum">Built {time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())} by <code>make docs</code> '
            '(<code>site/build.py</code>).</p>')
    (out / 'index.html').write_text(page_html('agentforge course', body, css))


def build(out:Path=ROOT / '_site', work:Path=ROOT / 'build' / 'site' / 'executed', only:list|None=None, jobs:int=1,
          force:bool=False, timeout:float|None=None, nbs:Path=ROOT / 'nbs', log=print) -> dict:
    "Execute (what is stale) and render the site; a summary with the failed lessons and the offline check."
    import nbformat
    t0 = time.time()
    every = lessons(Path(nbs))
    stems = [p.stem for p in every]
    chosen = [p for p in every if not only or p.stem in only]
    missing = set(only or []) - set(stems)
    if missing: raise SystemExit(f'no such lesson: {", ".join(sorted(missing))}; lessons: {", ".join(stems)}')
    metas = execute_all(chosen, work, jobs=jobs, force=force, timeout=timeout, log=log)
    css = (SITE_SRC / 'site.css').read_text()
    out.mkdir(parents=True, exist_ok=True)
    retro_names = {p.stem for p in retro_files()}
    exporter = make_exporter(set(stems), retro_names)
    titles = {}
    for nb in chosen:
        executed = work / f'{nb.stem}.ipynb'
        if not metas[nb.stem].get('ok') and metas[nb.stem].get('key') is None:
            executed = nb  # the executing process died before writing anything: the lesson as committed, flagged
        titles[nb.stem] = lesson_title(nbformat.read(executed, as_version=4))
        html_page = render_lesson(exporter, executed, stems, stems.index(nb.stem), metas[nb.stem], css, nb)
        (out / page(nb.stem)).write_text(html_page)
    retros = render_retros(out, set(stems), css)
    render_home(out, chosen, metas, titles, retros, css)
    remote = scan_tree(out)
    failed = sorted(n for n, m in metas.items() if not m.get('ok'))
    summary = {'pages': len(chosen), 'failed': failed, 'remote_assets': remote, 'seconds': round(time.time() - t0, 1),
               'executed': sorted(n for n, m in metas.items() if not m.get('cached'))}
    (out / 'build.json').write_text(json.dumps({**summary, 'lessons': metas}, indent=1))
    return summary


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--out', default=str(ROOT / '_site'), help='the site folder (default _site/)')
    ap.add_argument('--work', default=str(ROOT / 'build' / 'site' / 'executed'), help='executed copies (cache)')
    ap.add_argument('--only', nargs='*', help='lessons to build (names such as 01_grading); default all')
    ap.add_argument('--jobs', type=int, default=int(os.environ.get('DOCS_JOBS', '1')), help='lessons executed at once')
    ap.add_argument('--force', action='store_true', help='execute every chosen lesson again')
    ap.add_argument('--timeout', type=float, default=None, help='seconds one lesson may take (default: no limit)')
    ap.add_argument('--nbs', default=str(ROOT / 'nbs'), help='the folder of lesson notebooks (default nbs/)')
    ap.add_argument('--execute-one', nargs=3, metavar=('SRC', 'DEST', 'META'), help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.execute_one:
        src, dest, meta = map(Path, a.execute_one)
        sys.exit(0 if execute(src.resolve(), dest.resolve(), meta.resolve()) else 1)
    s = build(Path(a.out), Path(a.work), a.only, a.jobs, a.force, a.timeout, Path(a.nbs))
    print(f"site: {s['pages']} lesson pages in {a.out} ({s['seconds']:.0f} s; executed now: {len(s['executed'])})")
    if s['remote_assets']:
        print('FAILED: pages that load from the web:', json.dumps(s['remote_assets'], indent=1), file=sys.stderr)
    if s['failed']:
        print(f"FAILED: {len(s['failed'])} lesson(s) did not execute: {', '.join(s['failed'])} "
              f"(see {a.out}/build.json and each page's banner)", file=sys.stderr)
    sys.exit(1 if s['failed'] or s['remote_assets'] else 0)


if __name__ == '__main__':
    main()

"""The README's architecture section is true of the code: every module sits on one floor, and no module imports from a
floor above its own (data flows one way: brief → workspace → probe → pool → inner → grading → outer)."""
import io, re, tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / 'agentforge'

def floors() -> dict:
    "module -> floor index, read from the README's floors table."
    text = (ROOT / 'README.md').read_text()
    block = text[text.index('## Architecture'):]
    block = block[:block.index('\n## ', 1)]
    rows = [l for l in block.splitlines() if l.startswith('| ') and not l.startswith(('| floor', '|---'))]
    return {m: i for i, row in enumerate(rows) for m in re.findall(r'`(\w+)` \(\d\d\w?\)', row.split('|')[2])}

def imports(path:Path) -> set:
    src = path.read_text()
    found = re.findall(r'^\s*from \.(\w+) import|^\s*from agentforge\.(\w+) import|^\s*import agentforge\.(\w+)', src, re.M)
    return {next(x for x in f if x) for f in found}

def test_every_module_has_a_floor():
    fl = floors()
    modules = {p.stem for p in PKG.glob('*.py') if not p.stem.startswith('_')}
    assert modules - set(fl) == set(), f'modules missing from the README architecture table: {modules - set(fl)}'
    assert set(fl) - modules == set(), f'the README names modules that do not exist: {set(fl) - modules}'

def test_no_module_imports_from_a_floor_above():
    fl = floors()
    up = sorted((m, d) for m in fl for d in imports(PKG / f'{m}.py') if d in fl and fl[d] > fl[m])
    assert not up, f'imports against the data flow (module, imported from a higher floor): {up}'

def test_the_parser_sees_real_imports():
    "The parser finds imports that exist (outer imports config, tasks imports durable), so an empty result means something."
    fl = floors()
    assert 'config' in imports(PKG / 'outer.py') and fl['config'] <= fl['outer'] and 'durable' in imports(PKG / 'tasks.py')

MODULES = sorted(p.stem for p in PKG.glob('*.py') if p.stem != '_modidx')  # _modidx.py is nbdev's generated index

def _generated(lines:list) -> set:
    """Line numbers of nbdev's `# %% auto #0` cell (the `__all__` it writes): nbdev wraps the list at 120 characters and
    then puts `__all__ = ` in front of the first line, which no notebook edit can change."""
    out, inside = set(), False
    for n, line in enumerate(lines, 1):
        if line.startswith('# %% '): inside = line == '# %% auto #0'
        elif inside: out.add(n)
    return out

@pytest.mark.parametrize('module', MODULES)
def test_exported_lines_fit_and_hold_one_statement(module):
    "Exported lines are at most 120 characters, and no line joins statements with `;` (issue 15)."
    path = PKG / f'{module}.py'
    src = path.read_text()
    lines = src.splitlines()
    skip = _generated(lines)
    long = [f'{module}:{n} ({len(l)} chars)' for n, l in enumerate(lines, 1) if len(l) > 120 and n not in skip]
    semis = [f'{module}:{t.start[0]}' for t in tokenize.generate_tokens(io.StringIO(src).readline)
             if t.type == tokenize.OP and t.string == ';']
    assert not long, f'lines over 120 characters (rewrap them in the notebook, then nbdev-export): {long}'
    assert not semis, f'statements joined with `;` (one statement a line): {semis}'

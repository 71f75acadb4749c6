"""The user docs (`docs/TASK_SPEC.md`, `docs/SECURITY.md`) quote limits and defaults that match the code, and are linked."""
import inspect, json, re
from pathlib import Path
import pytest
from agentforge import gates, probe, rewards, rows, sandbox, schema, spec, tasks, workspace
from agentforge.families import FAMILIES

ROOT = Path(__file__).resolve().parents[1]
TASK, SEC = (ROOT / 'docs' / 'TASK_SPEC.md').read_text(), (ROOT / 'docs' / 'SECURITY.md').read_text()
flat = lambda s: ' '.join(s.split())  # prose wraps lines anywhere: compare with whitespace collapsed
TASK_F, SEC_F = flat(TASK), flat(SEC)

def test_readme_links_both_docs():
    readme = (ROOT / 'README.md').read_text()
    assert '](docs/TASK_SPEC.md)' in readme and '](docs/SECURITY.md)' in readme
    assert '](SECURITY.md)' in TASK and '](TASK_SPEC.md)' in SEC

def test_quotas_as_quoted():
    q = spec.QUOTAS
    for phrase in (f"at most {q['max_files']} files and folders", f"{q['max_file_bytes']:,} bytes per file",
                   f"{q['max_total_bytes']:,} bytes in all", f"{q['max_rows']:,} training rows",
                   f"names of {q['max_name_len']} bytes", f"a `task.yaml` of {q['max_yaml_bytes']:,} bytes",
                   f"nesting deeper than {spec.MAX_YAML_DEPTH} levels"):
        assert phrase in TASK_F, phrase

def _rows(section:str) -> dict:
    "The accepted-values table's rows for `section`: {field: (text, [(lo, hi)] of that field)}."
    out = {}
    for keys, text in re.findall(r'^\| (`' + section + r'\.[^|]*?) \| (.*?) \|$', TASK, re.M):
        spans = [tuple(map(float, m)) for m in re.findall(r'from ([\d.e+-]+) to ([\d.e+-]+)', text)]
        for i, k in enumerate(keys.split(',')): out[k.strip(' `').split('.', 1)[1]] = (text, spans[i:i + 1])
    return out

@pytest.mark.parametrize('section,ranges', [('grpo', schema.GRPO_RANGES), ('resources', schema.RESOURCE_RANGES)])
def test_ranges_table_matches_the_code(section, ranges):
    rows = _rows(section)
    fields = {f'{k}.{j}' if isinstance(r, dict) else k: s for k, r in ranges.items()
              for j, s in (r.items() if isinstance(r, dict) else [(None, r)])}
    for k, r in fields.items():
        text, spans = rows[k]
        if r.kind is str:
            assert f'{r.lo} to {r.hi} characters, `{r.pattern}`' in text, (k, text)
            continue
        assert spans == [(float(r.lo), float(r.hi))], (k, text, r)
        assert ('integer' if r.kind is int else 'a number') in text, (k, text)

def test_levels_students_families_and_columns():
    assert tasks.LEVELS == (1, 2, 3) and '1, 2 or 3' in TASK_F
    assert f"({tasks.EVAL_LEVEL}, the default, is the hidden eval's mix)" in TASK_F
    assert ' | '.join(schema.STUDENTS) in TASK
    assert all(f'`{f}`' in TASK for f in FAMILIES)
    assert all(f'`{c}`' in TASK for c in rows.RESERVED_COLUMNS)

def test_builtin_rewards_table_matches_the_code():
    rows = dict(re.findall(r'^\| `(\w+)` \| (.*?) \|', TASK, re.M))
    for name, comp in rewards.BUILTINS.items():
        assert name in rows, name
        for opt, default in comp.options.items():
            want = 'required' if default is rewards.REQUIRED else json.dumps(default)
            assert re.search(rf'`{opt}` \({want}\b', rows[name]), (name, opt, want, rows[name])
        if not comp.options: assert rows[name].strip() == '—', rows[name]

def test_probe_thresholds_as_quoted():
    t, q6, q17 = gates.BUDGETS['tiny-student'], gates.BUDGETS['qwen3-0.6b'], gates.BUDGETS['qwen3-1.7b']
    assert gates.BUDGETS['tiny-student-large'] == t   # the doc quotes the two tiny students' budget once
    assert f"tiny-student and tiny-student-large: {t['max_steps']} steps, {t['max_minutes']} minutes, {t['gpus']} GPU" in TASK_F
    assert q6['max_steps'] == q17['max_steps'] and q6['gpus'] == q17['gpus']
    assert f"{q6['max_steps']} steps, {q6['max_minutes']} or {q17['max_minutes']} minutes, {q6['gpus']} GPUs" in TASK_F
    for phrase in (f'fewer than {gates.MIN_ROWS} rows', f'more than {gates.MAX_DUPLICATES:.0%} duplicate prompts',
                   f'(+ {gates.ANSWER_IN_PROMPT_SLACK})',
                   f'fewer than {probe.GOLD_SHARE:.0%} of gold answers at {probe.GOLD_HIGH}', f'by {probe.MARGIN}',
                   f'{probe.CALL_S} s per call + {probe.LATENCY_S * 1000:.0f} ms per completion'):
        assert phrase in TASK_F, phrase
    assert len(probe.CORRUPTIONS) == 7 and 'gold buried among 8 candidates' in TASK_F and 'buried among 8' in SEC_F

def test_the_json_example_has_the_reports_fields():
    ex = json.loads(re.search(r'```json\n(.*?)```', TASK, re.S).group(1))
    real = gates.Report(False, 'X', [gates.Check('schema', True, 'm')], 0.1).to_json()
    assert set(ex) == set(real) and all(set(c) == set(real['checks'][0]) for c in ex['checks'])
    assert ex['reason'] == next(c['code'] for c in ex['checks'] if not c['ok'])

def test_sandbox_limits_as_quoted():
    L, MiB = sandbox.Limits(), 1 << 20
    assert L.memory_bytes == 1 << 30 and '1 GiB of address space per process' in SEC_F
    for phrase in (f'{L.nofile} open files', f'files of at most {L.fsize_bytes // MiB} MiB',
                   f'{L.tail_bytes >> 10} KiB of stdout/stderr kept', f'{L.flood_bytes // MiB} MiB allowed per call',
                   f'results of at most {L.result_bytes // MiB} MiB', f'{L.start_s:g} s for the sandbox to start',
                   f'{L.import_s:g} s to import `reward.py`', f'{L.call_s:g} s per call',
                   f'`/tmp` ({L.tmp_bytes // MiB} MiB)', f'`/dev/shm` ({L.shm_bytes // MiB} MiB)'):
        assert phrase in SEC_F, phrase
    assert sandbox.SANDBOX_ENV['OMP_NUM_THREADS'] == '1' and set(sandbox.SANDBOX_ENV) >= {'PATH', 'HOME', 'LANG', 'TMPDIR'}

def test_seccomp_names_are_in_the_filter():
    deny = sandbox._SECCOMP['x86_64'][3]
    named = re.search(r'A seccomp filter answers (.*?) with `EPERM`', SEC_F).group(1)
    names = re.findall(r'`(\w+?)(?:_\*)?`', named)
    assert len(names) >= 8
    for name in names: assert name in deny or any(k.startswith(name) for k in deny), name

def test_baseline_tool_as_quoted():
    calls = inspect.signature(workspace.Workspace.__init__).parameters['baseline_calls'].default
    assert f'rounded to 2 decimals, with {calls} calls per episode' in SEC_F

def test_saturation_bars_quoted_as_the_probe_has_them():
    "The contract's saturation row states the gate's bars, its two samples and its group size as `probe` has them."
    from agentforge.probe import SAT_ALWAYS, SAT_FLAT, SAT_GROUP, SAT_MORE, SAT_NEVER, SAT_ROWS
    row = next(l for l in TASK.splitlines() if l.startswith('| `saturation`'))
    for s in (f'under {SAT_NEVER:.0%}', f'over {SAT_ALWAYS:.0%}', f'over {SAT_FLAT:.0%} of its groups',
              f'{SAT_ROWS} prompts', f'{SAT_MORE} prompts', f'up to {SAT_GROUP}', 'two standard errors', 'borderline',
              f'full credit on over {SAT_ALWAYS:.0%}', f'half the rewards\' weight', 'counts prompts, not samples'):
        assert s in row, s

"The probe: honest controls validate for every family; each degenerate or adversarial spec gets its reason code."
import hashlib, json, os, time
from concurrent.futures import ThreadPoolExecutor
import pytest, yaml
from agentforge.families import FAMILIES, get_family
from agentforge.probe import corruptions, validate
from agentforge.sandbox import Limits
from agentforge.rows import example_spec
from agentforge.tasks import hidden_path, hidden_split

FAMS = sorted(FAMILIES)

@pytest.fixture(scope='module')
def platform(tmp_path_factory):
    root = tmp_path_factory.mktemp('platform')
    for f in FAMS: hidden_split(get_family(f), root=root)
    return root

def _children() -> list:
    "Live (non-zombie) processes whose parent is this test process."
    out = []
    for p in os.listdir('/proc'):
        if not p.isdigit(): continue
        try: st = open(f'/proc/{p}/stat').read().rsplit(')', 1)[1].split()
        except OSError: continue
        if st[0] != 'Z' and int(st[1]) == os.getpid(): out.append(p)
    return out

@pytest.fixture(autouse=True)
def invariants(platform):
    "After every probe test: hidden files unchanged, no sandbox left running, no af-* temp entries left."
    before = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in (platform / 'hidden').iterdir()}
    tmp = {e for e in os.listdir('/tmp') if e.startswith('af-')}
    yield
    assert {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in (platform / 'hidden').iterdir()} == before
    deadline = time.monotonic() + 5
    while _children() and time.monotonic() < deadline: time.sleep(0.05)
    assert _children() == []
    assert {e for e in os.listdir('/tmp') if e.startswith('af-')} <= tmp

def variant(tmp_path, platform, rewards=None, reward_py=None, rows=None, family='arithmetic', grpo=None):
    d = example_spec(family, tmp_path / 'spec', mode='train' if rows is not None else 'generate', hidden_root=platform)
    doc = yaml.safe_load((d / 'task.yaml').read_text())
    if rewards: doc['rewards'] = rewards
    if grpo: doc['grpo'].update(grpo)
    (d / 'task.yaml').write_text(yaml.safe_dump(doc, sort_keys=False))
    if reward_py: (d / 'reward.py').write_text(reward_py)
    if rows is not None: (d / 'data' / 'train.jsonl').write_text(''.join(json.dumps(r) + '\n' for r in rows))
    return d

@pytest.mark.parametrize('mode', ['generate', 'train'])
@pytest.mark.parametrize('family', FAMS)
def test_honest_example_validates(family, mode, tmp_path, platform):
    rep = validate(example_spec(family, tmp_path / family, mode=mode, hidden_root=platform), hidden_root=platform)
    assert rep.validated, [(c.id, c.code, c.message) for c in rep.checks if not c.ok]
    assert [c.id for c in rep.checks] == ['schema', 'hyperparameters', 'dataset', 'leakage', 'determinism', 'variance',
                                          'gold', 'discrimination', 'saturation']

def test_honest_custom_reward_validates(tmp_path, platform):
    d = variant(tmp_path, platform, [dict(use='reward.py:partial', weight=1.0)], reward_py=(
        "def partial(prompts, completions, answer, **kw):\n"
        "    out = []\n"
        "    for c, a in zip(completions, answer):\n"
        "        c = c.strip()\n"
        "        out.append(1.0 if c == a else 0.2 if c.lstrip('-').isdigit() and len(c) == len(a) else 0.0)\n"
        "    return out\n"))
    rep = validate(d, hidden_root=platform)
    assert rep.validated, rep.failure()
    assert {'determinism', 'statefulness'} <= {c.id for c in rep.checks}

CUSTOM = {
    'constant': ("return [0.5] * len(completions)", 'REWARD_CONSTANT'),
    'random': ("import random\n    return [random.random() for _ in completions]", 'REWARD_NONDETERMINISTIC'),
    'length': ("return [min(1.0, len(c) / 40) for c in completions]", 'REWARD_GOLD_LOW'),
    'substring': ("return [float(a in c) for c, a in zip(completions, answer)]", 'REWARD_NOT_DISCRIMINATIVE'),
    'format_only': ("return [float(c.strip().lstrip('-').isdigit()) for c in completions]", 'REWARD_NOT_DISCRIMINATIVE'),
    'flaky': ("import hashlib\n    if any(hashlib.md5(c.encode()).digest()[0] < 40 for c in completions): raise RuntimeError('flaky')\n"
              "    return [float(c.strip() == a) for c, a in zip(completions, answer)]", 'REWARD_RAISED'),
    'true': ("return [True for c in completions]", 'REWARD_BAD_VALUE'),
    'string_one': ("return ['1' for c in completions]", 'REWARD_BAD_VALUE'),
    'nan': ("return [float('nan') for c in completions]", 'REWARD_BAD_VALUE'),
    'inf': ("return [float('inf') for c in completions]", 'REWARD_BAD_VALUE'),
    'short': ("return [1.0]", 'REWARD_MISSING_VALUE'),
    'lying_eq': ("class One(float):\n        def __eq__(self, o): return True\n    return [One(2.0) for c in completions]", 'REWARD_BAD_VALUE'),
    'exit0': ("import sys\n    sys.exit(0)", 'REWARD_EXITED_EARLY'),
    'skiptest': ("import unittest\n    raise unittest.SkipTest('skip')", 'REWARD_RAISED'),
}

@pytest.mark.parametrize('name', sorted(CUSTOM))
def test_degenerate_custom_rewards(name, tmp_path, platform):
    body, code = CUSTOM[name]
    d = variant(tmp_path, platform, [dict(use='reward.py:r', weight=1.0)],
                reward_py=f"def r(prompts, completions, answer, **kw):\n    {body}\n")
    rep = validate(d, hidden_root=platform)
    assert not rep.validated and rep.reason == code, (rep.reason, rep.failure())
    assert rep.failure().message
    canaries = [i.canary for i in hidden_split(get_family('arithmetic'), root=platform)]
    assert not any(c in json.dumps(rep.to_json()) for c in canaries)

def test_counter_that_pays_first_calls(tmp_path, platform):
    d = variant(tmp_path, platform, [dict(use='reward.py:r', weight=1.0)], reward_py=(
        "n = 0\ndef r(prompts, completions, answer, **kw):\n    global n\n    n += 1\n"
        "    return [1.0 if n <= 2 else float(c.strip() == a) for c, a in zip(completions, answer)]\n"))
    rep = validate(d, hidden_root=platform)
    assert rep.reason in ('REWARD_STATEFUL', 'REWARD_CONSTANT'), rep.failure()

def test_slow_reward(tmp_path, platform):
    d = variant(tmp_path, platform, [dict(use='reward.py:r', weight=1.0)], reward_py=(
        "import time\ndef r(prompts, completions, answer, **kw):\n    time.sleep(0.03 * len(completions))\n"
        "    return [float(c.strip() == a) for c, a in zip(completions, answer)]\n"))
    assert validate(d, hidden_root=platform).reason == 'REWARD_SLOW'
    assert validate(d, hidden_root=platform, limits=Limits(call_s=1.0)).reason == 'REWARD_TIMEOUT'

def test_reward_slow_per_call_is_caught(tmp_path, platform):
    "0.7 s per call is 3.6 ms per completion on the probe batch: only the per-call budget catches it (SECURITY.md: p95 call)."
    d = variant(tmp_path, platform, [dict(use='reward.py:r', weight=1.0)], reward_py=(
        "import time\ndef r(prompts, completions, answer, **kw):\n    time.sleep(0.7)\n"
        "    return [float(c.strip() == a) for c, a in zip(completions, answer)]\n"))
    rep = validate(d, hidden_root=platform)
    assert rep.reason == 'REWARD_SLOW' and 'for 1 completions' in rep.failure().message, rep.failure()

def test_a_gate_that_cannot_run_is_not_checked_not_passed(tmp_path, platform, monkeypatch):
    "A real student without weights here: saturation is 'not checked', and the report says it is incomplete."
    monkeypatch.setenv('HF_HUB_OFFLINE', '1')
    rep = validate(example_spec('string_ops', tmp_path / 's', student='qwen3-0.6b', hidden_root=platform), hidden_root=platform)
    sat = [c for c in rep.checks if c.id == 'saturation']
    assert rep.validated and not rep.complete and rep.not_checked == ['saturation']
    assert len(sat) == 1 and (sat[0].ok, sat[0].checked, sat[0].status) == (True, False, 'not checked')
    assert rep.to_json()['complete'] is False and rep.to_json()['not_checked'] == ['saturation']
    off = validate(example_spec('string_ops', tmp_path / 't', hidden_root=platform), hidden_root=platform, saturation=False)
    assert off.validated and off.not_checked == ['saturation']   # turned off by the caller: said, not passed

@pytest.mark.parametrize('use,extra', [('contains_answer', {}), ('format_regex', dict(pattern=r'-?\d+')),
                                       ('length_penalty', dict(target=3)), ('numeric_match', dict(strict=False))])
def test_lenient_builtins_rejected(use, extra, tmp_path, platform):
    rep = validate(variant(tmp_path, platform, [dict(use=use, weight=1.0, **extra)]), hidden_root=platform)
    assert rep.reason in ('REWARD_NOT_DISCRIMINATIVE', 'REWARD_GOLD_LOW'), rep.failure()

def test_dataset_gates(tmp_path, platform):
    fam = get_family('arithmetic')
    from agentforge.tasks import generate, hidden_keys
    items = generate(fam, 60, seed=3, exclude=hidden_keys(fam, root=platform))
    rows = [dict(prompt=i.prompt, answer=i.answer) for i in items]
    assert validate(variant(tmp_path / 'a', platform, rows=rows[:10]), hidden_root=platform).reason == 'DATASET_TOO_SMALL'
    assert validate(variant(tmp_path / 'b', platform, rows=rows[:30] * 2), hidden_root=platform).reason == 'DATASET_DUPLICATES'
    given = [dict(prompt=f"{r['prompt']} (the answer is {r['answer']})", answer=r['answer']) for r in rows]
    assert validate(variant(tmp_path / 'c', platform, rows=given), hidden_root=platform).reason == 'DATASET_ANSWER_IN_PROMPT'
    import random
    rng = random.Random(0)
    impossible = [dict(prompt=r['prompt'], answer=''.join(rng.choice('qxzjkv') for _ in range(9))) for r in rows]
    rep = validate(variant(tmp_path / 'd', platform, rows=impossible, rewards=[dict(use='exact_match', weight=1.0)]), hidden_root=platform)
    assert rep.reason == 'SATURATED_NEVER', rep.failure()

@pytest.mark.parametrize('family', FAMS)
def test_generated_rows_pass_the_answer_in_prompt_gate_at_every_level(tmp_path, family):
    """The family's own generator never trips the answer-in-prompt gate, whatever rows a machine's secret leaves:
    200 seeds of 64 rows (the smallest design-space option) at every level. Against the eval mix, string ops at
    level 1 (67% on average, up to 81%) failed a fresh machine's CI."""
    from agentforge.agents import write_spec
    from agentforge.gates import check_dataset
    from agentforge.schema import load_spec
    from agentforge.tasks import LEVELS, generate
    fam = get_family(family)
    for lv in LEVELS:
        d = tmp_path / str(lv); d.mkdir(); (d / 'task.yaml').write_text(write_spec(family, dict(level=lv, rows=64)))
        spec = load_spec(d)
        for seed in range(200):
            rows = [dict(prompt=i.prompt, answer=i.answer) for i in generate(fam, 64, seed, fam.level_params(lv))]
            c = check_dataset(spec, rows)
            assert c.ok, (lv, seed, c.message)

def test_answer_in_prompt_gate_still_catches_given_answers(tmp_path, platform):
    "The bar moved to the generator's own rate; answers appended to the prompts still fail, in both data modes."
    from agentforge.agents import write_spec
    from agentforge.gates import check_dataset
    from agentforge.schema import load_spec
    from agentforge.tasks import generate
    for family in FAMS:
        if family == 'multihop_lookup': continue   # its answer is always in the context: nothing to give away
        fam = get_family(family)
        rows = [dict(prompt=f"{i.prompt} (answer: {i.answer})", answer=i.answer) for i in generate(fam, 64, 1)]
        gen = tmp_path / family / 'gen'; gen.mkdir(parents=True)
        (gen / 'task.yaml').write_text(write_spec(family, dict(level=1, rows=64)))
        train = example_spec(family, tmp_path / family / 'train', mode='train', hidden_root=platform)
        for d in (gen, train):
            c = check_dataset(load_spec(d), rows)
            assert c.code == 'DATASET_ANSWER_IN_PROMPT', (family, d.name, c.message)

def test_leakage_gates(tmp_path, platform):
    hid = hidden_split(get_family('arithmetic'), root=platform)
    rows = [dict(prompt=i.prompt, answer=i.answer) for i in hid[:40]]
    assert validate(variant(tmp_path / 'a', platform, rows=rows), hidden_root=platform).reason == 'LEAKAGE_HIDDEN_ITEM'
    d = variant(tmp_path / 'b', platform)
    (d / 'notes.md').write_text(f"found this: {hid[0].canary}")
    assert validate(d, hidden_root=platform).reason == 'LEAKAGE_CANARY'
    d = variant(tmp_path / 'c', platform, [dict(use='reward.py:r', weight=1.0)], reward_py=(
        "TABLE = " + repr({i.prompt: i.answer for i in hid[:20]}) + "\n"
        "def r(prompts, completions, answer, **kw):\n    return [float(c.strip() == a) for c, a in zip(completions, answer)]\n"))
    assert validate(d, hidden_root=platform).reason == 'LEAKAGE_NGRAM'

def test_hyperparameter_gates(tmp_path, platform):
    assert validate(variant(tmp_path / 'a', platform, grpo=dict(max_steps=1500)), hidden_root=platform).reason == 'HYPERPARAMS_OVER_BUDGET'
    assert validate(variant(tmp_path / 'b', platform, grpo=dict(max_completion_length=2)), hidden_root=platform).reason == 'HYPERPARAMS_COMPLETION_TOO_SHORT'

def test_schema_and_brief(tmp_path, platform):
    d = variant(tmp_path, platform)
    assert validate(d, brief='date_math', hidden_root=platform).reason == 'BRIEF_MISMATCH'
    rep = validate(d, brief='arithmetic', hidden_root=platform, students=('tiny-student-large',))
    assert rep.reason == 'STUDENT_NOT_OFFERED' and "trains 'tiny-student'" in rep.failure().message  # not silently swapped
    assert validate(d, hidden_root=platform, students=('tiny-student', 'tiny-student-large'), saturation=False).validated
    (d / 'extra.txt').write_text('x')
    rep = validate(d, hidden_root=platform)
    assert rep.reason == 'DISALLOWED_FILE' and rep.checks[0].id == 'schema'
    (d / 'extra.txt').unlink(); (d / 'link.jsonl').symlink_to(hidden_path(get_family('arithmetic'), platform))
    assert validate(d, hidden_root=platform).reason == 'SYMLINK'

def test_corruptions_never_equal_gold_where_avoidable():
    rows = [dict(prompt=f'q{i}', answer=str(i)) for i in range(10)]
    for c in corruptions(rows):
        assert c['other'] != c['gold'] and c['wrong_format'] != c['gold'] and c['gold'] in c['buried']

def test_concurrent_probes_with_adversarial_mix(tmp_path, platform):
    "40 validations at concurrency 4, 10% adversarial (a fork/sleep/exit mix): honest verdicts unchanged."
    honest = [example_spec(f, tmp_path / f'h{k}-{f}', hidden_root=platform) for k, f in enumerate(FAMS * 6)][:36]
    evil = [variant(tmp_path / f'e{k}', platform, [dict(use='reward.py:r', weight=1.0)], reward_py=src) for k, src in enumerate([
        "import os\ndef r(prompts, completions, answer, **kw):\n    while True: os.fork()\n",
        "import time\ndef r(prompts, completions, answer, **kw):\n    time.sleep(60)\n",
        "import sys\ndef r(prompts, completions, answer, **kw):\n    sys.exit(0)\n",
        "def r(prompts, completions, answer, **kw):\n    x = bytearray(3 << 30)\n    return [1.0] * len(completions)\n"])]
    jobs = [(d, True) for d in honest] + [(d, False) for d in evil]
    import random; random.Random(0).shuffle(jobs)
    with ThreadPoolExecutor(4) as ex:
        reps = list(ex.map(lambda j: validate(j[0], hidden_root=platform, limits=Limits(call_s=3.0), saturation=False), jobs))
    assert all(r.validated == ok for r, (_, ok) in zip(reps, jobs)), [(r.reason, str(d)) for r, (d, ok) in zip(reps, jobs) if r.validated != ok]

def test_saturation_verdict_is_cached_by_content_but_never_for_reward_py(tmp_path, platform, monkeypatch):
    "The same built-in spec again: the cached verdict, no sampling. A changed row, or a reward.py spec: sampled."
    import agentforge.probe as probe, agentforge.student as student
    monkeypatch.setattr(probe, 'cache_dir', lambda: tmp_path / 'cache')   # the student stays where it is built
    calls, real = [], student.complete
    def counting(*a, **k): calls.append(1); return real(*a, **k)
    monkeypatch.setattr(student, 'complete', counting)
    spec = example_spec('string_ops', tmp_path / 's', hidden_root=platform)
    first = validate(spec, hidden_root=platform)
    n = len(calls)   # 1, or 2 where 48 prompts could not tell and 144 more were sampled
    again = validate(spec, hidden_root=platform)
    sat = lambda r: [c for c in r.checks if c.id == 'saturation'][0]
    assert n in (1, 2) and len(calls) == n and sat(again).message == sat(first).message and sat(again).ok == sat(first).ok
    assert len(list((tmp_path / 'cache' / 'probe' / 'saturation').glob('*.json'))) == 1
    doc = yaml.safe_load((spec / 'task.yaml').read_text())
    doc['data']['generate']['seed'] = 8   # other rows: a new key
    (spec / 'task.yaml').write_text(yaml.safe_dump(doc, sort_keys=False))
    validate(spec, hidden_root=platform)
    assert len(calls) > n
    n = len(calls)
    doc['rewards'].append(dict(use='reward.py:half', weight=0.1))
    (spec / 'task.yaml').write_text(yaml.safe_dump(doc, sort_keys=False))
    (spec / 'reward.py').write_text('def half(prompts, completions, answer, **kw):\n    return [0.5 for _ in completions]\n')
    validate(spec, hidden_root=platform)
    m = len(calls)
    validate(spec, hidden_root=platform)
    assert m > n and len(calls) > m   # agent code: sampled every time

def test_saturation_gate_samples_192_prompts_where_48_cannot_tell(tmp_path):
    """Install a's draw of the demo's most common unit-conversion submission (level 3): 44 of its 48 groups flat, one
    past the 90% bar, so the old gate refused it; on install d, 43 of 48 passed, and there it gained +0.29
    (retros/2026-12-07-two-installs-two-demos.md). Within two standard errors of a bar, the gate samples 144 more
    prompts and decides on 192. A spec far from every bar costs 48 prompts, as before."""
    from pathlib import Path
    from agentforge.agents import write_spec
    from agentforge.probe import check_saturation
    from agentforge.rows import load_rows
    from agentforge.schema import load_spec
    root = tmp_path / 'install-a'; root.mkdir()
    (root / 'secret.key').write_bytes((Path(__file__).parents[1] / 'results/installs/a.secret.key').read_bytes())
    def gate(family, level):
        d = tmp_path / f'{family}-{level}'; d.mkdir()
        (d / 'task.yaml').write_text(write_spec(family, dict(level=level)))
        spec = load_spec(d)
        return check_saturation(spec, load_rows(spec, hidden_root=root), None, cache=False)
    near = gate('unit_conversion', 3)
    assert '(192 prompts x 8: 48 could not tell, at 4% passed and 92% flat)' in near.message, near.message
    assert near.ok and '87% of groups have zero variance; borderline' in near.message   # 87% ± 4.3: too near to refuse
    far = gate('arithmetic', 1)
    assert far.ok and '(48 prompts x 8)' in far.message and 'could not tell' not in far.message, far.message
    assert 'borderline' not in far.message

def test_saturation_refuses_only_past_a_bar_by_two_standard_errors():
    "The verdict on measured shares: clearly past a bar (refused), clearly inside (passed), or too near to tell."
    from agentforge.probe import Shares, _verdict
    V = lambda passed, flat, n, k, full=0.0, **se: _verdict(Shares(passed, full, flat, **se), n, k)
    assert V(0.0, 1.0, 384, 48) == ('SATURATED_NEVER', False)        # no pass in 384 samples
    assert V(0.01, 0.95, 384, 48) == (None, True)                    # 1% of 384: 2% is within 2 SE
    assert V(0.01, 0.92, 1536, 192) == ('SATURATED_NEVER', True)     # 1% of 1536: clearly under 2%
    assert V(0.05, 44 / 48, 384, 48) == (None, True)                 # the demo's spec on install a: 92% flat
    assert V(0.05, 182 / 192, 1536, 192) == ('SATURATED_GROUPS', False)   # 95% of 192 groups: over 90% + 4.3
    assert V(0.3, 0.10, 384, 48) == (None, False)                    # far from every bar
    assert V(1.0, 0.2, 1536, 192, full=0.999) == ('SATURATED_ALWAYS', False)   # full credit on 99.9%
    assert V(0.999, 0.2, 1536, 192, full=0.45) == (None, False)     # passes, but half credit: nothing solved

def test_saturation_standard_error_counts_prompts_not_samples():
    """Samples of one prompt fail together: one failing prompt among 48 (8 of 384 samples) is evidence about 48
    prompts, not 384 independent draws. The gate's standard error is measured over prompts where that is larger."""
    from agentforge.probe import FULL, SAT_ALWAYS, _shares, _verdict
    spread = ([0.0] + [FULL] * 7) * 8 + [FULL] * 320   # 8 failures, one in each of 8 prompts
    bunched = [0.0] * 8 + [FULL] * 376                  # 8 failures, all in the first prompt
    a, b = _shares(spread, 8), _shares(bunched, 8)
    assert a.full == b.full == 376 / 384 and a.full_se < b.full_se and b.full_se > 0.02
    assert a.flat == 40 / 48 and b.flat == 1.0
    clean = _shares([FULL] * 384, 8)
    assert clean.full == 1.0 and clean.full_se == 0.0
    assert _verdict(clean, 384, 48)[0] == 'SATURATED_ALWAYS'   # no failure at all: the bar's own SE decides
    assert SAT_ALWAYS + 2 * b.full_se > 1.0  # one bunched failing prompt: 1.0 would not be past the bar either

def test_already_solved_means_full_credit_not_a_pass(tmp_path, platform):
    """A reward every completion satisfies is refused as already solved. Half of it beside half of the family's
    matcher passes every sample (a total of 0.5) but gives full credit only where the answer is right: GRPO still sees
    which sample is better, so the gate passes it. Before 2026-12-07 both were refused; the customer-support spec it
    refused that way gained +0.54 trained (results/saturation/train-always.jsonl)."""
    from agentforge.agents import write_spec
    from agentforge.probe import check_saturation
    from agentforge.rows import load_rows
    from agentforge.schema import load_spec
    def gate(name, rewards):
        d = tmp_path / name; d.mkdir()
        (d / 'task.yaml').write_text(write_spec('arithmetic', {}).replace(
            'rewards: [{use: "numeric_match", weight: 1.0}]', f'rewards: {rewards}'))
        spec = load_spec(d)
        return check_saturation(spec, load_rows(spec, hidden_root=platform), None, cache=False)
    solved = gate('any-text', '[{use: format_regex, pattern: "(?s).*", weight: 1.0}]')
    assert (solved.ok, solved.code) == (False, 'SATURATED_ALWAYS'), solved.message
    assert 'passes 100% of 384 samples (48 prompts x 8), 100% with full credit' in solved.message, solved.message
    half = gate('half-text', '[{use: format_regex, pattern: "(?s).*", weight: 0.5}, {use: numeric_match, weight: 0.5}]')
    assert half.ok and 'passes 100% of' in half.message and 'full credit nearly always' not in half.message, half.message

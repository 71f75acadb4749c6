"""Every quiz bank under nbs/quizzes/ is well formed, and numeric answers agree with the library that teaches them."""
from pathlib import Path
import json
import pytest, yaml
from agentforge.grading import uplift

BANKS = sorted((Path(__file__).resolve().parents[1] / 'nbs' / 'quizzes').glob('*.yaml'))

@pytest.mark.parametrize('bank', BANKS, ids=lambda p: p.stem)
def test_bank_is_well_formed(bank):
    qs = yaml.safe_load(bank.read_text())
    assert isinstance(qs, list) and qs and len({q['id'] for q in qs}) == len(qs)
    nbs = bank.parents[1]
    assert (nbs / f'{bank.stem}.ipynb').exists(), f'{bank.name} names no lesson'
    assert f'nbs/{bank.stem}.ipynb' in bank.read_text().split('\n', 1)[0], f'{bank.name}: its header names another lesson'
    from agentforge.quiz import load_bank
    assert load_bank(bank.stem) == qs  # agentforge.quiz.check_question accepts every question (and names what breaks)
    for q in qs:
        assert q['type'] in ('single', 'multi', 'numeric', 'discussion') and q['question'].strip(), q['id']
        if q['type'] == 'discussion':
            assert q['notes'].strip() and 'answers' not in q, q['id']
            continue
        if q['type'] == 'numeric':
            assert isinstance(q['answer'], (int, float)) and q['tolerance'] >= 0 and q['feedback'].strip(), q['id']
            continue
        right = sum(a['correct'] is True for a in q['answers'])
        assert right == 1 if q['type'] == 'single' else right >= 1, q['id']  # multi: select all that apply
        assert all(isinstance(a['correct'], bool) and a['text'].strip() and a['feedback'].strip() for a in q['answers']), q['id']

def test_numeric_answers_match_the_code():
    inner = {q['id']: q for q in yaml.safe_load((BANKS[0].parent / '07_inner.yaml').read_text())}
    assert abs(uplift(0.25, 0.40) - inner['inner-uplift-normalised']['answer']) < 1e-9
    pool = {q['id']: q for q in yaml.safe_load((BANKS[0].parent / '08_pool.yaml').read_text())}
    import inspect
    from agentforge.pool import Pool
    d = {k: v.default for k, v in inspect.signature(Pool.__init__).parameters.items()}
    assert min(d['backoff_s'] * 2 ** (3 - 1), d['max_backoff_s']) == pool['pool-backoff']['answer']

def test_probe_saturation_numeric_answer_matches_the_code():
    import math
    from agentforge.probe import SAT_FLAT, SAT_ROWS, _side
    probe = {q['id']: q for q in yaml.safe_load((BANKS[0].parent / '06_probe.yaml').read_text())}
    q = probe['probe-saturation-borderline']
    assert abs(SAT_FLAT + 2 * math.sqrt(SAT_FLAT * (1 - SAT_FLAT) / SAT_ROWS) - q['answer']) < q['tolerance']
    assert _side(48 / 48, SAT_FLAT, SAT_ROWS) == 1 and _side(47 / 48, SAT_FLAT, SAT_ROWS) == 0   # as the feedback says

def test_transfer_numeric_answer_matches_the_code():
    transfer = {q['id']: q for q in yaml.safe_load((BANKS[0].parent / '12_transfer.yaml').read_text())}
    from agentforge.transfer import paired_diff_ci
    q = transfer['transfer-paired-mean']
    assert abs(paired_diff_ci([0.50, 0.60, 0.40, 0.70], [0.30, 0.50, 0.40, 0.40])['mean'] - q['answer']) <= q['tolerance']

def test_outer_numeric_answer_matches_the_code():
    outer = {q['id']: q for q in yaml.safe_load((BANKS[0].parent / '11a_grpo.yaml').read_text())}
    import torch
    from agentforge.grpo import group_advantages
    q = outer['grpo-advantage-winner']
    assert abs(group_advantages(torch.tensor([1., 0., 0., 0.]))[0].item() - q['answer']) <= q['tolerance']

def test_agents_and_episode_numeric_answers_match_the_code():
    from agentforge.agents import CHOICES, _product
    from agentforge.grading import episode_reward
    agents = {q['id']: q for q in yaml.safe_load((BANKS[0].parent / '09_agents.yaml').read_text())}
    q = agents['agents-design-space-size']
    assert abs(sum(1 for _ in _product()) - q['answer']) <= q['tolerance'] and len(CHOICES) == 3
    ep = {q['id']: q for q in yaml.safe_load((BANKS[0].parent / '10_episode.yaml').read_text())}
    q = ep['episode-second-try-reward']
    assert abs(episode_reward(2, 0.20, 0.28, 60.0, 1200.0).total - q['answer']) <= q['tolerance']

def test_landscape_numeric_answer_matches_the_code():
    q = {q['id']: q for q in yaml.safe_load((BANKS[0].parent / '12b_landscape.yaml').read_text())}['landscape-gain-sd']
    from agentforge.landscape import _gain_sd
    assert abs(_gain_sd(0.02, 0.20) - q['answer']) <= q['tolerance']

def test_paired_se_numeric_answer_matches_the_code():
    q = {q['id']: q for q in yaml.safe_load((BANKS[0].parent / '12b_landscape.yaml').read_text())}['landscape-paired-se']
    from agentforge.scoring import paired_se
    assert abs(paired_se([0.0] * 1024, [1.0] * 400 + [0.0] * 624) - q['answer']) <= q['tolerance']

def test_credit_and_curve_numeric_answers_match_the_code():
    from types import SimpleNamespace
    from agentforge.grpo import samples_from
    q = {q['id']: q for q in yaml.safe_load((BANKS[0].parent / '11a_grpo.yaml').read_text())}['grpo-credit-rejected-spec']
    def rec(total, subs):
        return SimpleNamespace(reward=dict(total=total),
                               turns=[dict(prompt_ids=[1], completion_ids=[10 + n], logprobs=[-1.0]) for n in range(len(subs))],
                               tool_calls=[dict(turn=n, name='submit', result=dict(validated=ok)) for n, ok in enumerate(subs)])
    group = [rec(0.6, [True]), rec(0.5, [False, True]), rec(0.0, [False, False]), rec(0.4, [True])]
    b_first = next(s for s in samples_from([group], scale='none') if s.episode == 1 and s.completion_ids == [10])
    assert abs(b_first.advantage - q['answer']) <= q['tolerance']
    from agentforge.curve import curve_change
    q = {q['id']: q for q in yaml.safe_load((BANKS[0].parent / '12c_curve.yaml').read_text())}['curve-paired-mean']
    row = lambda step, xs: dict(step=step, episodes=[dict(brief='arithmetic', seed=i, total=x) for i, x in enumerate(xs)])
    ch = curve_change([row(0, [0.4, 0.2, 0.5, 0.3]), row(10, [0.5, 0.2, 0.7, 0.3])], ['arithmetic'])
    assert abs(ch['mean'] - q['answer']) <= q['tolerance']

def _bank(stem): return {q['id']: q for q in yaml.safe_load((BANKS[0].parent / f'{stem}.yaml').read_text())}
def _close(q, value): assert abs(value - q['answer']) <= q['tolerance'] + 1e-9, (q['id'], value, q['answer'])
def _marks(q, judge):
    "Check a multiple-choice question's right options against `judge(option text)`, a computation of the library."
    assert [a['correct'] for a in q['answers']] == [bool(judge(a['text'])) for a in q['answers']], q['id']

def test_reference_system_questions_match_the_code():
    "The four reference questions: who is trained, decaying credit, the two stacks, the peak; numbers from the library."
    from agentforge.grading import MAX_ATTEMPTS, VALIDATION_DECAY, validation_score
    from agentforge.report import REFERENCE_PEAK, summarize
    from agentforge.transfer import REFERENCE_TRANSFER
    from agentforge.presets import get_preset
    assert (MAX_ATTEMPTS, VALIDATION_DECAY) == (3, 0.2)  # "1.0 first try, -0.2 per retry, a retry limit of 3"
    assert [validation_score(a) for a in (1, 2, 3, None)] == [1.0, 0.8, 0.6, 0.0]
    right = next(a['text'] for a in _bank('01_grading')['grading-failed-validation']['answers'] if a['correct'])
    right = ' '.join(right.split())
    assert '1.0 on the first try, 0.2 less per retry (0.8, 0.6)' in right and 'retry limit of 3' in right
    _close(_bank('13_run')['run-reference-peak'], REFERENCE_PEAK)
    assert '54 outer steps' in ' '.join(summarize([dict(step=0, reward_mean=0.1)]))  # the report's own wording
    _close(_bank('12_transfer')['transfer-reference-heldout'], REFERENCE_TRANSFER['diff'])
    assert abs(REFERENCE_TRANSFER['after'] - REFERENCE_TRANSFER['before'] - REFERENCE_TRANSFER['diff']) < 1e-9
    who = next(a['text'] for a in _bank('11_outer')['outer-who-is-trained']['answers'] if a['correct'])
    assert get_preset('qwen3.6-35b-a3b').source.split('/')[1] in who and 'r 8, alpha 32' in who
    stacks = ' '.join(next(a['text'] for a in _bank('13_run')['run-two-stacks']['answers'] if a['correct']).split())
    assert 'GRPOTrainer' in stacks and 'never corrupts the other' in stacks

def test_layer_bank_numbers_match_the_code():
    import inspect, random
    from agentforge.families import Arithmetic, UnitConversion
    from agentforge.presets import presets_for
    from agentforge.schema import check_task
    from agentforge.spec import QUOTAS
    from agentforge.rows import example_doc
    from agentforge.rewards import combine, length_penalty, numeric_match
    from agentforge.sandbox import Limits
    from agentforge.workspace import Workspace
    from agentforge.grading import MAX_ATTEMPTS
    from agentforge.probe import CALL_S, LATENCY_S
    from agentforge.served import post_json
    from agentforge.cloning import CloneRecipe
    from agentforge.report import reward_components
    from agentforge.quiz import grade
    fam = _bank('02a_families')
    _close(fam['families-carry-habit'], int(Arithmetic().distractor(random.Random(0), '', '85', dict(a=47, b=38, op='+'))))
    _close(fam['families-wrong-factor'], int(UnitConversion().distractor(None, '', '7000', dict(x=7, factor=1000, direction='up'))))
    _marks(fam['families-integer-score'], lambda t: Arithmetic().score(t, '1024'))
    _close(_bank('03_presets')['presets-student-count'], len(presets_for('student')))
    _close(_bank('04_spec')['spec-max-files'], QUOTAS['max_files'])
    doc = example_doc('arithmetic')
    doc['grpo'].update(num_generations=8, per_device_train_batch_size=12)
    msg = next(p.message for p in check_task(doc) if p.field == 'grpo.per_device_train_batch_size')
    _close(_bank('04b_schema')['schema-batch-suggestion'], int(msg.rsplit('e.g. ', 1)[1]))
    rw = _bank('04a_rewards')
    _close(rw['rewards-combine-none'], combine([[None], [1.0]], [1.0, 0.2])[0])
    _close(rw['rewards-length-penalty'], length_penalty([None], ['x' * 15], [''], target=10)[0])
    _marks(rw['rewards-numeric-which'], lambda t: numeric_match([None], [t.replace('\\n', '\n')], ['1000'])[0])
    _close(_bank('05_sandbox')['sandbox-memory'], Limits().memory_bytes / 2 ** 30)
    ws = _bank('05a_workspace')
    _close(ws['workspace-baseline-calls'], inspect.signature(Workspace.__init__).parameters['baseline_calls'].default)
    _close(ws['workspace-attempts'], MAX_ATTEMPTS)
    _close(_bank('06_probe')['probe-call-budget'], CALL_S + 10 * LATENCY_S)
    from agentforge.gates import MIN_ROWS
    _close(_bank('05d_gates')['gates-min-rows'], MIN_ROWS)
    _close(_bank('09a_served')['served-retry-count'], inspect.signature(post_json).parameters['retries'].default)
    _close(_bank('10a_cloning')['cloning-steps'], CloneRecipe().steps)
    from agentforge.config import RunConfig
    from agentforge.run import clone_for
    assert 'offer=0.5' in _bank('10a_cloning')['cloning-student-offer']['question'] and CloneRecipe().offer == 0.5
    assert CloneRecipe().students == () == clone_for(RunConfig()).students
    assert clone_for(RunConfig(students='tiny-student-large')).students == ('tiny-student-large',)
    rec = yaml.safe_load((Path(__file__).parents[1] / 'results/agent/recovery-after.json').read_text())   # JSON is YAML
    assert _bank('10a_cloning')['cloning-slip-target']['answers'][0]['feedback'].count(f"{round(rec['fixed_share'] * 96)} of 96") == 1
    row = dict(validation_mean=1.0, uplift_mean=0.10, post_mean=0.40, speed_mean=0.50)
    _close(_bank('12a_report')['report-components'], sum(v[0] for v in reward_components([row]).values()))
    q = _bank('14_quiz')['quiz-tolerance-edge']
    probe = dict(id='edge', type='numeric', question='?', answer=0.575, tolerance=0.005, feedback='.')
    assert grade(probe, q['answer'])[0] and not grade(probe, q['answer'] + 0.0001)[0]

def test_layer_bank_choices_match_the_code():
    "Multiple-choice questions whose right options the library can decide, decided by the library."
    from agentforge.workspace import ToolError, check_path
    from agentforge.harness import decode_value
    def refused(text):
        path = {'a name with a newline in it': 'a\nb'}.get(text, text.strip('`'))
        try: check_path(path, for_write=True)
        except ToolError: return True
        return False
    _marks(_bank('05a_workspace')['workspace-refused-paths'], refused)
    enc = {'`[True, False]` (booleans)': [['x', "<class 'bool'>"]], '`[0.25, None]`': [['f', (0.25).hex()], None],
           "`[float('nan'), 0.5]`": [['f', float('nan').hex()], ['f', (0.5).hex()]],
           '`[1.5, 0.0]`': [['f', (1.5).hex()], ['f', (0.0).hex()]], "`['1', '0']` (strings)": [['x', "<class 'str'>"]]}
    _marks(_bank('05b_harness')['sandbox-values'], lambda t: any(decode_value(e)[1] for e in enc[t]))

def test_quoted_defaults_match_the_code():
    "Defaults and constants that questions quote in their text."
    import inspect
    from agentforge.episode import MAX_DEAD_SHARE, Budgets
    from agentforge.grading import SAMPLES, WEIGHTS
    from agentforge.tasks import HIDDEN_SIZE
    from agentforge.config import OuterConfig
    from agentforge.grpo import Sample, token_weights
    from agentforge.agents import KNOBS
    from agentforge.student import _build_student
    assert Budgets().max_unusable == 2 and MAX_DEAD_SHARE == 0.25          # 10_episode: unusable turn, "a quarter"
    w = WEIGHTS['reference']                                               # 01, 10, 12a: 0.35 / 0.60 (0.25 + 0.75) / 0.05
    assert (w.validation, w.quality, w.speed, w.post / w.quality, w.floor) == (0.35, 0.60, 0.05, 0.25, -0.25)
    assert SAMPLES == 0 and HIDDEN_SIZE == 1024                            # 03b "SAMPLES = 0", 12b "1,024 hidden items"
    assert 'samples=4)' in inspect.getsource(_build_student)             # 03b: the band is sampled, 4 per dev item
    assert OuterConfig().loss_agg == 'episode'                             # 11_outer: the default aggregation
    s = lambda ep, n: Sample([1], [2] * n, [0.0] * n, 1.0, ep)
    _close(_bank('11a_grpo')['grpo-token-weight'], token_weights([s(0, 4), s(0, 6), s(1, 40)])[0])
    n = 1
    for v in KNOBS.values(): n *= len(v)
    assert f'{n:,}' in _bank('09_agents')['agents-design-space-size']['feedback']   # "3,888 specs per family"
    q = _bank('03b_student')['student-all-wrong-group']
    _close(q, 0.95 ** 8)

def test_target_loss_answer_holds():
    "03b student-target-loss: the labelled-positions loss equals the model's own loss and gradient, and is used."
    import inspect, random, torch
    from agentforge.models import tiny_model
    from agentforge.student import StudentRecipe, completion_loss, pad_pairs, pretraining_rows, student_tokenizer, \
        target_loss, TRAINING_CODE
    recipe = StudentRecipe(rows_per_family=4, tokenizer_rows=20, vocab_size=300)
    tok = student_tokenizer(recipe)
    rows = [r for v in pretraining_rows(recipe, tok).values() for r in v]
    random.Random(0).shuffle(rows)
    b, m = pad_pairs(rows[:8], tok.pad_token_id), tiny_model('student', seed=1, tok=tok)
    assert (b['labels'] != -100).float().mean() < 0.5                    # "most positions need no prediction"
    full, part = m(**b).loss, target_loss(m, b)
    g_full, g_part = (torch.autograd.grad(x, m.lm_head.weight)[0] for x in (full, part))
    assert abs(full.item() - part.item()) < 1e-5 and torch.allclose(g_full, g_part, atol=1e-6)
    assert 'target_loss(' in inspect.getsource(completion_loss) and TRAINING_CODE >= 2
    assert 'TRAINING_CODE' in inspect.getsource(StudentRecipe.key)

def test_support_depth_answer_matches_the_family():
    "02b: a node's depth is the number of customer answers after the opening message."
    from agentforge.families import get_family
    from agentforge.tasks import dev_split
    for it in dev_split(get_family('customer_support'))[:32]:
        assert sum(m['role'] == 'user' for m in it.prompt) - 1 == it.meta['depth']
    _close(_bank('02b_support')['support-depth'], 3 - 1)  # the question's dialogue: an opening and two answers

def test_models_vocab_answer_matches_the_code():
    from agentforge.models import build_tokenizer
    _close(_bank('03a_models')['models-byte-vocab'], len(build_tokenizer()))

def test_registry_answers_match_the_code():
    from agentforge.registry import MIN_ROWS, JsonlFamily
    bank = _bank('02c_registry')
    _close(bank['registry-min-eval'], MIN_ROWS['eval'])
    fam = JsonlFamily(dict(name='acme_routing', brief='.', scorer='choice', multi_turn=False,
                           choices=['account', 'billing', 'technical']), [dict(prompt='p', answer='billing', meta={})])
    _marks(bank['registry-choice'], lambda t: fam.score(t, 'billing'))

def test_library_similarity_answer_matches_the_code():
    from agentforge.library import similarity
    _close(_bank('09b_library')['library-similarity'], similarity('convert units of length', 'convert units of mass'))

def test_reuse_numeric_answer_matches_the_code():
    q = {q['id']: q for q in yaml.safe_load((BANKS[0].parent / '09c_reuse.yaml').read_text())}['reuse-k']
    from agentforge.reuse import MAX_EXAMPLES
    assert abs(MAX_EXAMPLES - q['answer']) <= q['tolerance']

def test_reuse_trained_agent_question_quotes_the_recorded_run():
    "The figures the question quotes are results/reuse/trained/reuse.json's (lesson 09c reads the same file)."
    import json
    res = json.loads((BANKS[0].parents[2] / 'results' / 'reuse' / 'trained' / 'reuse.json').read_text())
    q = _bank('09c_reuse')['reuse-trained-agent']
    text = ' '.join([q['question']] + [a['text'] + ' ' + a['feedback'] for a in q['answers']])
    by, pair = {c['name']: c for c in res['conditions']}, {p['name']: p for p in res['paired']}
    for v in (by['trained']['uplift'], by['tiny (untrained)']['uplift'], pair['trained']['uplift_diff'],
              pair['trained']['uplift_diff_ci'][0], pair['trained']['uplift_diff_ci'][1]):
        assert f'{v:+.3f}' in text.replace('−', '-'), v
    assert pair['trained']['uplift_diff_ci'][0] > 0 and sum(c['read_examples'] for c in res['conditions']) == 0

def test_config_numeric_answer_matches_the_code():
    from agentforge.config import RunConfig, default
    q = _bank('10b_config')['config-demo-steps']
    assert RunConfig().outer.steps == default('steps') == q['answer']


def test_headroom_question_matches_the_recorded_cold_demo():
    "curve-headroom's figures are the recorded cold demo's (results/2026-12-05-cold-demo-8e99da7), recomputed here."
    from agentforge.config import split_families
    from agentforge.curve import headroom
    from agentforge.outer import read_metrics
    run = Path(__file__).resolve().parents[1] / 'results' / '2026-12-05-cold-demo-8e99da7'
    best = json.loads((run / 'best_seen.json').read_text())
    h = headroom(read_metrics(run, name='curve.jsonl'), best, split_families('customer_support')[0])
    q = _bank('12c_curve')['curve-headroom']
    text = q['question'] + q['answers'][0]['text'] + q['answers'][0]['feedback']
    for figure in (f"{h['first']:.3f}", f"{h['last']:.3f}", f"{h['best']:.3f}", f"{h['first'] + 0.25:.3f}",
                   f"{h['closed']:.0%}", f"{h['best'] - h['last']:.3f}"):
        assert figure in text, figure


def test_give_ups_question_matches_the_recorded_runs():
    "cloning-give-ups quotes the two recorded three-seed runs (results/outer/give-ups-3seeds, clone-offer-3seeds/no-offer)."
    outer = Path(__file__).resolve().parents[1] / 'results' / 'outer'
    q = _bank('10a_cloning')['cloning-give-ups']
    text = q['question']
    for folder in (outer / 'give-ups-3seeds', outer / 'clone-offer-3seeds' / 'no-offer'):
        runs = json.loads((folder / 'summary.json').read_text())['runs']
        diffs = ', '.join(f"{r['transfer_diff']['mean']:+.3f}" for r in runs)
        assert diffs.rsplit(', ', 1)[0] in text and diffs.rsplit(', ', 1)[1] in text, diffs
        held = [next(r['mean'] for r in json.loads((folder / f'seed-{s}' / 'transfer.json').read_text())['table']
                     if r['agent'] == 'trained' and r['split'] == 'held-out') for s in range(3)]
        assert f"{sum(held) / 3:.3f}" in text, sum(held) / 3


def test_habit_cut_question_matches_the_recorded_bench():
    "student-habit-cut quotes results/student/capability-2400-steps.json (bench/student_capability.py) and the family's size."
    cap = json.loads((Path(__file__).resolve().parents[1] / 'results' / 'student' / 'capability-2400-steps.json').read_text())
    a = cap['habit']['arithmetic']
    q = _bank('03b_student')['student-habit-cut']
    text = q['question'] + q['answers'][0]['text'] + q['answers'][3]['feedback']
    ks = a['kinds']
    two = ks['+ two digits']['n'] + ks['- two digits']['n']
    items = two + ks['+ one digit']['n'] + ks['- one digit']['n']
    for figure in (f"{a['habit_free']:.3f}", f"{a['pre']:.3f}", f"{a['gain']:.2f}", f"{two} of the {items}",
                   f"{min(ks['+ one digit']['habit_free'], ks['- one digit']['habit_free']):.2f}",
                   f"{max(ks['+ two digits']['habit_free'], ks['- two digits']['habit_free']):.2f}"):
        assert figure in text, figure
    one_digit = {(a_, b, op) for a_ in range(10) for b in range(10) for op in '+-' if op == '+' or b <= a_}
    assert f"only {len(one_digit)} one-digit" in text

"agentforge.quiz: one pure grade(), its three renderers (static Markdown, terminal, ipywidgets), and every lesson's quiz."
import json, re, subprocess, sys
from pathlib import Path
import pytest
from typer.testing import CliRunner
from agentforge.quiz import (LETTERS, QuizWidget, StaticQuiz, _said, bank_path, check_question, grade, lessons,
                             load_bank, option_feedback, parse, quiz, to_markdown, widget_frontend)

NBS = Path(__file__).resolve().parents[1] / 'nbs'
LESSONS = sorted(p.stem for p in NBS.glob('*.ipynb')
                 if p.stem not in ('index', '90_cli') and '#| default_exp' in p.read_text())

def opt(text, correct, fb='because.'): return dict(text=text, correct=correct, feedback=fb)
SINGLE = dict(id='s', type='single', question='Pick b.', answers=[opt('a', False, 'not a'), opt('b', True, 'yes b'),
                                                                  opt('c', False, 'not c')])
MULTI = dict(id='m', type='multi', question='Pick a and c.', answers=[opt('a', True, 'a is'), opt('b', False, 'b is not'),
                                                                      opt('c', True, 'c is')])
NUMERIC = dict(id='n', type='numeric', question='0.575?', answer=0.575, tolerance=0.005, feedback='explained')
DISCUSS = dict(id='d', type='discussion', question='Why?', notes='for the instructor')

def right_answer(q):
    "What a person who knows the answer types in the terminal."
    if q['type'] == 'numeric': return repr(q['answer'])
    if q['type'] == 'discussion': return '-'
    return ','.join(LETTERS[i] for i, a in enumerate(q['answers']) if a['correct'])

def test_quiz_grade_single_and_discussion():
    assert grade(SINGLE, 1) == (True, 'yes b') and grade(SINGLE, 0) == (False, 'not a')
    for bad in (3, -1, True, 1.0, 'b'):
        with pytest.raises(ValueError): grade(SINGLE, bad)
    assert grade(DISCUSS, 'anything') == (None, 'for the instructor')
    assert option_feedback(MULTI, 1) == (False, 'b is not')

def test_quiz_grade_multi_needs_exactly_the_right_set():
    assert grade(MULTI, [0, 2])[0] is True and grade(MULTI, {2, 0, 2})[0] is True    # order and repeats do not matter
    ok, fb = grade(MULTI, [0])
    assert ok is False and 'Also right: c' in fb and '✓ a: a is' in fb                 # a missed option is named
    ok, fb = grade(MULTI, [0, 1, 2])
    assert ok is False and '✗ b: b is not' in fb                                       # one extra wrong option
    assert grade(MULTI, [])[0] is False
    with pytest.raises(ValueError): grade(MULTI, [5])

def test_quiz_grade_numeric_tolerance_edges():
    a, t = NUMERIC['answer'], NUMERIC['tolerance']
    assert [grade(NUMERIC, x)[0] for x in (a, a - t, a + t, 0.58, 0.57)] == [True] * 5      # both edges count
    assert [grade(NUMERIC, x)[0] for x in (a + 1.01 * t, a - 1.01 * t, 0.5801)] == [False] * 3
    assert grade(NUMERIC, 1)[1].startswith('Not quite: the answer is 0.575 (± 0.005).')
    exact = dict(NUMERIC, answer=3, tolerance=0)
    assert grade(exact, 3)[0] and not grade(exact, 3.001)[0]
    for bad in ('0.575', None, True, float('nan'), float('inf')):
        with pytest.raises(ValueError): grade(NUMERIC, bad)

def test_quiz_parse_what_a_person_types():
    assert (parse(SINGLE, ' B '), parse(SINGLE, '2'), parse(MULTI, 'c, a'), parse(MULTI, '1 3')) == (1, 1, [0, 2], [0, 2])
    assert parse(NUMERIC, '0.58') == 0.58 and parse(DISCUSS, '') == ''
    for q, text in ((SINGLE, 'd'), (SINGLE, 'a,b'), (SINGLE, ''), (MULTI, ''), (NUMERIC, 'half'), (NUMERIC, 'nan')):
        with pytest.raises(ValueError): parse(q, text)

def test_quiz_check_question_names_the_rule():
    for q in (SINGLE, MULTI, NUMERIC, DISCUSS): assert check_question(q) is q
    bad = [({**SINGLE, 'answers': [opt('a', True), opt('b', True)]}, 'exactly one'),
           ({**MULTI, 'answers': [opt('a', False), opt('b', False)]}, 'at least one'),
           ({**SINGLE, 'answers': [opt('a', True), dict(text='b', correct=False)]}, 'feedback'),
           ({**SINGLE, 'answers': [opt('a', True)]}, 'at least two'),
           ({**NUMERIC, 'tolerance': -0.1}, 'tolerance'), ({**NUMERIC, 'feedback': ' '}, 'feedback'),
           ({**DISCUSS, 'notes': ''}, 'notes'), ({**SINGLE, 'type': 'essay'}, 'accepted'), ({**SINGLE, 'id': ''}, 'id')]
    for q, why in bad:
        with pytest.raises(ValueError, match=why): check_question(q)

def test_quiz_bank_lookup_and_errors(tmp_path):
    assert bank_path('01') == bank_path('grading') == bank_path('01_grading')
    with pytest.raises(ValueError, match='available: 01_grading, 01a_durable, 01b_safefs, 02_tasks'): bank_path('poetry')
    (tmp_path / '01_a.yaml').write_text('- {id: x, type: single, question: q, answers: []}\n')
    (tmp_path / '01_b.yaml').write_text('- [unclosed\n')
    with pytest.raises(ValueError, match='matches several'): bank_path('01', tmp_path)
    with pytest.raises(ValueError, match='01_a.yaml: question .x.: needs `answers`'): load_bank('01_a', tmp_path)
    with pytest.raises(ValueError, match='01_b.yaml: not valid YAML'): load_bank('01_b', tmp_path)
    with pytest.raises(ValueError, match='no quiz banks'): bank_path('x', tmp_path / 'none')

@pytest.mark.parametrize('lesson', LESSONS)
def test_quiz_every_layer_lesson_ends_with_its_quiz(lesson):
    "Every lesson that builds a layer has a bank of at least 5 questions, links it, and its last code cell asks it."
    qs = load_bank(lesson)
    assert len(qs) >= 5, f'{lesson}: {len(qs)} questions'
    cells = json.loads((NBS / f'{lesson}.ipynb').read_text())['cells']
    code = [''.join(c['source']).strip() for c in cells if c['cell_type'] == 'code']
    assert code[-1] == f"quiz('{lesson}')", f'{lesson} does not end with its quiz cell: {code[-1][:80]!r}'
    assert code[-2] == 'from agentforge.quiz import quiz'
    tail = ''.join(''.join(c['source']) for c in cells[-3:] if c['cell_type'] == 'markdown')
    assert f'(quizzes/{lesson}.yaml)' in tail, f'{lesson} does not link its bank'

def test_quiz_every_wrong_option_explains_itself():
    for lesson in lessons():
        for q in load_bank(lesson):
            for a in q.get('answers', []):
                # "wrong" alone teaches nothing: a wrong option's feedback says why, in a sentence
                assert a['correct'] or len(a['feedback'].split()) >= 5, (lesson, q['id'], a['text'])

def test_quiz_discussion_prompts_are_ours_and_marked():
    found = {l: [q for q in load_bank(l) if q['type'] == 'discussion'] for l in lessons()}
    prompts = [q for qs in found.values() for q in qs]
    assert len(prompts) >= 3 and all('our prompt' in q['source'] for q in prompts)

def test_quiz_static_renderer_without_a_browser():
    for lesson in lessons():
        qs = load_bank(lesson)
        page = to_markdown(qs, lesson)
        assert page.count('<details>') == page.count('</details>') == len(qs)
        for n, q in enumerate(qs, 1):
            block = page.split(f'**{n}. ', 1)[1].split('</details>', 1)[0]
            if q['type'] in ('single', 'multi'):
                right = ', '.join(LETTERS[i] for i, a in enumerate(q['answers']) if a['correct'])
                assert f'<summary>Answer: {right}</summary>' in block and block.count('✗') + block.count('✓') == len(q['answers'])
            elif q['type'] == 'numeric': assert f"**{q['answer']:g}** (± {q['tolerance']:g})" in block
            else: assert '<summary>Notes for the instructor</summary>' in block
    shown = quiz('01_grading')   # no kernel in pytest: the static form
    assert isinstance(shown, StaticQuiz) and shown._repr_markdown_() == to_markdown(load_bank('01_grading'), '01_grading')

def test_quiz_widget_frontend_detection(monkeypatch):
    "A widget only where a kernel runs a request that allows stdin (a person's front end); nbclient sends it off."
    import IPython
    class Kernel:
        def __init__(self, stdin): self.stdin = stdin
        def get_parent(self): return dict(content=dict(allow_stdin=self.stdin))
    shell = type('Shell', (), {})()
    monkeypatch.setattr(IPython, 'get_ipython', lambda: shell)
    assert widget_frontend() is False                           # an IPython shell without a kernel (execnb, a terminal)
    shell.kernel = Kernel(False)
    assert widget_frontend() is False and isinstance(quiz('01'), StaticQuiz)   # nbconvert / nbclient
    shell.kernel = Kernel(True)
    assert widget_frontend() is True and isinstance(quiz('01'), QuizWidget)    # JupyterLab (tests/test_quiz_lab.py)
    monkeypatch.setenv('AGENTFORGE_QUIZ', 'static')
    assert isinstance(quiz('01'), StaticQuiz)
    monkeypatch.setenv('AGENTFORGE_QUIZ', 'fancy')
    with pytest.raises(ValueError, match='accepted: auto, widget, static'): quiz('01')

def test_quiz_widget_grades_when_clicked():
    "Every question of two banks answered through the widget's own buttons: feedback at once, first answers scored."
    qs = load_bank('01_grading') + [q for q in load_bank('06_probe') if q['type'] == 'discussion']
    w = QuizWidget(qs, 'test')
    first = next(k for k, q in enumerate(qs) if q['type'] == 'single')   # answered wrong first, then right
    assert w.score.value == f'<b>score: 0/0 answered ({w.gradable} of {w.gradable} left)</b>'
    for k, (q, it) in enumerate(zip(qs, w.items)):
        if q['type'] == 'single':
            wrong = next(i for i, a in enumerate(q['answers']) if not a['correct'])
            right = next(i for i, a in enumerate(q['answers']) if a['correct'])
            target = wrong if k == first else right
            it.choices[target].click()
            assert it.choices[target].button_style == ('danger' if target == wrong else 'success')
            assert it.feedback.value == _said(*option_feedback(q, target))      # that option's own feedback
            if k == first: it.choices[right].click()            # a second try is shown, not scored
        elif q['type'] == 'multi':
            for i, a in enumerate(q['answers']):
                if a['correct']:
                    it.choices[i].value = True
                    assert it.choices[i].disabled                   # a tick is a commitment
            it.check.click()
        elif q['type'] == 'numeric':
            it.entry.value = 'not a number'
            it.check.click()
            assert 'answer with a number' in it.feedback.value and k not in w.first   # not an answer: not scored
            it.entry.value = repr(q['answer'])
            it.check.click()
        else:
            it.check.click()
            assert 'Notes:' in it.feedback.value
    gradable = sum(q['type'] != 'discussion' for q in qs)
    assert w.first[first] is False and sum(w.first.values()) == gradable - 1
    assert w.score.value == f'<b>final score: {gradable - 1}/{gradable}</b>'
    bundle = w._repr_mimebundle_()
    assert 'application/vnd.jupyter.widget-view+json' in bundle and bundle['text/markdown'] == to_markdown(qs, 'test')

def test_quiz_terminal_renderer_answers_on_stdin(tmp_path):
    "`agentforge quiz LESSON` in a subprocess: right answers piped on stdin (after one that is not an answer) score full marks."
    qs = load_bank('14_quiz')
    typed = '\n'.join(['z'] + [right_answer(q) for q in qs]) + '\n'   # 'z' is not an answer: asked again
    r = subprocess.run([sys.executable, '-c', 'from agentforge.cli import app; app()', 'quiz', '14_quiz'], input=typed,
                       capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    n = sum(q['type'] != 'discussion' for q in qs)
    assert r.stdout.strip().splitlines()[-1] == f'final score: {n}/{n}' and 'answer with a letter' in r.stdout
    marks = re.findall(r'^> +(✓|✗|notes:) ', r.stdout, re.M)        # the verdict printed after each answer read
    assert marks == ['✓' if q['type'] != 'discussion' else 'notes:' for q in qs]

def test_quiz_command_scripted_answers_and_unknown_lesson():
    from agentforge.cli import app
    qs = load_bank('01_grading')
    r = CliRunner().invoke(app, ['quiz', 'grading', '--answers', f"x; {right_answer(qs[1])}"])
    assert r.exit_code == 0 and 'counted as unanswered' in r.output and '(no more answers)' in r.output
    assert r.output.strip().splitlines()[-1] == f"score: 1/{len(qs)}"
    r = CliRunner().invoke(app, ['quiz', 'poetry'])
    assert r.exit_code == 2 and 'available: 01_grading' in r.output and '14_quiz' in r.output
    r = CliRunner().invoke(app, ['quiz'])
    assert r.exit_code == 0 and all(l in r.output for l in lessons())
    r = CliRunner().invoke(app, ['quiz', '14', '--show'])
    assert r.exit_code == 0 and r.output.strip() == to_markdown(load_bank('14_quiz'), '14_quiz').strip()

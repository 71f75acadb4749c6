"""A lesson's quiz in a real JupyterLab, in a real browser: start JupyterLab on loopback, open a copy of lesson 01 in
headless Chromium (Debian's chromium + chromedriver, through Selenium), run its quiz cells, click an answer, read the
feedback the widget shows. Skips, saying why, only where the browser cannot start."""
import json, os, shutil, socket, subprocess, sys, time, urllib.request
from pathlib import Path
import pytest
from agentforge.quiz import load_bank
import headless

CHROMIUM, CHROMEDRIVER = Path('/usr/bin/chromium'), Path('/usr/bin/chromedriver')
LESSON = Path(__file__).resolve().parents[1] / 'nbs' / '01_grading.ipynb'
pytestmark = pytest.mark.browser

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]

def _wait(cond, timeout:float, what:str, every:float=0.25):
    "Poll `cond()` until it returns something truthy; fail naming `what` after `timeout` seconds."
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if (v := cond()): return v
        time.sleep(every)
    raise AssertionError(f'timed out after {timeout:.0f} s waiting for {what}')

@pytest.fixture
def lab(tmp_path):
    "JupyterLab on a free loopback port with token auth, a temp root holding a copy of lesson 01: (url, token, wait)."
    root, token, port = tmp_path / 'root', 'quiz-test-token', _free_port()
    root.mkdir()
    shutil.copy(LESSON, root / LESSON.name)
    settings = {'notebook-extension/tracker': dict(windowingMode='none'),  # every cell in the DOM, not only visible ones
                'apputils-extension/notification': dict(fetchNews='false')}  # no "get notified about news?" toast
    for name, value in settings.items():
        f = tmp_path / 'settings' / f"@jupyterlab/{name.split('/')[0]}" / f"{name.split('/')[1]}.jupyterlab-settings"
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(json.dumps(value))
    (tmp_path / 'cfg').mkdir()  # no language servers to look for: a faster start
    (tmp_path / 'cfg' / 'jupyter_server_config.json').write_text(json.dumps(
        dict(ServerApp=dict(jpserver_extensions=dict(jupyter_lsp=False)))))
    env = {**os.environ, 'JUPYTER_CONFIG_DIR': str(tmp_path / 'cfg'), 'JUPYTER_RUNTIME_DIR': str(tmp_path / 'rt'),
           'JUPYTERLAB_SETTINGS_DIR': str(tmp_path / 'settings'), 'JUPYTERLAB_WORKSPACES_DIR': str(tmp_path / 'ws'),
           'OMP_NUM_THREADS': '1'}
    env.pop('AGENTFORGE_QUIZ', None)  # the kernel must decide by itself that a front end is there
    proc = subprocess.Popen([sys.executable, '-m', 'jupyterlab', '--no-browser', f'--port={port}', '--port-retries=0',
                             '--ServerApp.ip=127.0.0.1', f'--IdentityProvider.token={token}', f'--ServerApp.root_dir={root}',
                             '--LabApp.expose_app_in_browser=True', '--LabApp.news_url=', '--LabApp.extension_manager=readonly',
                             '--ServerApp.allow_root=True', '--ServerApp.terminals_enabled=False'],  # CI runs as root
                            env=env, stdout=subprocess.DEVNULL, stderr=open(tmp_path / 'lab.log', 'wb'))
    url = f'http://127.0.0.1:{port}'
    def up():
        if proc.poll() is not None: raise AssertionError(f'JupyterLab exited: {(tmp_path / "lab.log").read_text()[-2000:]}')
        try: return urllib.request.urlopen(f'{url}/api/status?token={token}', timeout=2).status == 200
        except OSError: return False
    try: yield url, token, lambda: _wait(up, 90, 'JupyterLab to answer /api/status')  # chromium starts meanwhile
    finally:
        try: urllib.request.urlopen(urllib.request.Request(f'{url}/api/shutdown?token={token}', method='POST'), timeout=5)
        except OSError: pass  # already gone: terminate below
        try: proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.terminate()
            try: proc.wait(10)
            except subprocess.TimeoutExpired: proc.kill()

@pytest.fixture
def browser(tmp_path):
    "Headless Debian chromium driven by its chromedriver; skip (with the reason) only if it cannot start."
    webdriver = pytest.importorskip('selenium.webdriver', reason='selenium is not installed (pip install -e ".[dev]")')
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.chrome.service import Service
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        pytest.skip(f'no browser: {CHROMIUM} or {CHROMEDRIVER} is missing (apt-get install chromium chromium-driver)')
    opts = webdriver.ChromeOptions()
    opts.binary_location = str(CHROMIUM)
    for a in ('--headless=new', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
              '--disable-component-update', '--no-first-run', '--disable-sync', '--disable-dev-shm-usage',
              '--window-size=1400,1000', f'--user-data-dir={tmp_path / "chromium-profile"}'):
        opts.add_argument(a)
    try: driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=opts)
    except WebDriverException as e: pytest.skip(f'chromium could not start: {str(e).splitlines()[0][:300]}')
    driver.set_script_timeout(120)
    try: yield driver
    finally: driver.quit()

RUN_QUIZ_CELLS = """
const done = arguments[arguments.length - 1];
(async () => {
  const app = window.jupyterapp;
  const panel = Array.from(app.shell.widgets('main')).find(w => w.content && w.content.widgets);
  await panel.context.ready;
  await panel.sessionContext.ready;
  const nb = panel.content;
  if (app.shell.currentWidget !== panel) { done('error: the notebook is not the current widget'); return; }
  nb.activeCellIndex = nb.widgets.length - 2;  // the import, then quiz('01_grading')
  await app.commands.execute('notebook:run-cell-and-select-next');
  await app.commands.execute('notebook:run-cell');  // the last cell: no new cell below it
  done('ok');
})().catch(e => done('error: ' + e));
"""

def test_quiz_widget_in_jupyterlab(lab, browser, tmp_path):
    from selenium.webdriver.common.by import By
    url, token, wait_for_server = lab
    wait_for_server()
    t0 = time.monotonic()
    browser.get(f'{url}/lab/tree/{LESSON.name}?token={token}')
    lap = {}
    _wait(lambda: browser.execute_script(
        "const a = window.jupyterapp; if (!a) return false;"
        "const w = Array.from(a.shell.widgets('main')).find(w => w.content && w.content.widgets);"
        "return !!(w && w.content.widgets.length > 3);"), 90, 'the notebook to open')
    lap['notebook open'] = time.monotonic() - t0
    # a real click gives the notebook focus: its commands act on the shell's current widget
    browser.find_element(By.CSS_SELECTOR, '.jp-NotebookPanel .jp-Cell .jp-InputPrompt').click()
    assert browser.execute_async_script(RUN_QUIZ_CELLS) == 'ok'
    lap['quiz cells ran'] = time.monotonic() - t0
    cell = browser.execute_script(  # the quiz cell's node: the notebook's last cell
        "const w = Array.from(window.jupyterapp.shell.widgets('main')).find(w => w.content && w.content.widgets);"
        "const c = w.content.widgets[w.content.widgets.length - 1]; c.node.scrollIntoView(); return c.node;")
    try: buttons = _wait(lambda: cell.find_elements(By.CSS_SELECTOR, 'button.jupyter-button'), 60,
                         'the quiz widget to render in the last cell (an ipywidgets button)')
    except AssertionError as e:
        browser.save_screenshot(str(tmp_path / 'lab.png'))
        outputs = browser.execute_script(
            "const w = Array.from(window.jupyterapp.shell.widgets('main')).find(w => w.content && w.content.widgets);"
            "return JSON.stringify(w.content.widgets.slice(-2).map(c => c.model.toJSON().outputs)).slice(0, 1500);")
        raise AssertionError(f'{e}; the last cells\' outputs: {outputs}; screenshot {tmp_path / "lab.png"}') from None
    lap['widget drawn'] = time.monotonic() - t0
    # the widget, not the static fallback: the buttons are the widget's, one per option of each single-choice question
    bank = load_bank('01_grading')
    per_question = [len(q['answers']) if q['type'] == 'single' else 1 for q in bank]
    assert len(buttons) == sum(per_question)
    k = next(i for i, q in enumerate(bank) if q['type'] == 'single')
    q = bank[k]
    wrong = next(j for j, a in enumerate(q['answers']) if not a['correct'])
    target = buttons[sum(per_question[:k]) + wrong]
    assert target.text.strip() == 'abcdefghijklmnopqrstuvwxyz'[wrong]
    target.click()
    words = ' '.join(q['answers'][wrong]['feedback'].replace('`', '').split()[:6])
    _wait(lambda: words in ' '.join(cell.text.split()), 30, f'the feedback {words!r} to appear after the click')
    assert 'mod-danger' in target.get_attribute('class')             # a wrong answer turns red
    assert f'score: 0/1 answered' in cell.text                       # the running score counted it
    lap['feedback shown'] = time.monotonic() - t0
    if os.environ.get(headless.KEEP):  # the page as the test left it: the widget, the red answer, its feedback
        browser.save_screenshot(str(tmp_path / 'lab.png'))
        headless.keep(tmp_path / 'lab.png', 'jupyterlab-quiz-01_grading.png')
    print('JupyterLab quiz, seconds after the server answered:', {k: round(v, 1) for k, v in lap.items()})

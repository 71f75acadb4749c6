"""Headless Debian chromium for the course's browser tests: start it, screenshot a page, read its rendered DOM.

Chromium runs with no network at all (`--host-resolver-rules` maps every host to nothing), so a page that renders
here renders offline. Only a browser that cannot start is a reason to skip; a page that fails to render fails.
"""
import functools, os, shutil, subprocess, tempfile
from pathlib import Path

KEEP = 'AGENTFORGE_SCREENSHOTS'  # a folder: the browser tests also save their screenshots there (results/screenshots)

FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
         '--disable-component-update', '--no-first-run', '--disable-sync', '--hide-scrollbars',
         '--host-resolver-rules=MAP * ~NOTFOUND', '--virtual-time-budget=5000']


def chromium() -> str|None:
    "The chromium binary, or None."
    for name in ('chromium', 'chromium-browser', 'google-chrome'):
        p = shutil.which(name)
        if p: return p
    return '/usr/bin/chromium' if os.access('/usr/bin/chromium', os.X_OK) else None


def _run(args:list, timeout:float=90) -> subprocess.CompletedProcess:
    exe = chromium()
    with tempfile.TemporaryDirectory(prefix='af-chromium-') as profile:
        return subprocess.run([exe, *FLAGS, f'--user-data-dir={profile}', *args], capture_output=True, text=True,
                              timeout=timeout)


@functools.lru_cache(None)
def cannot_start() -> str|None:
    "Why the browser cannot start here (a reason to skip), or None when it can."
    if chromium() is None: return 'chromium is not installed (Debian: apt-get install chromium; .ci/run installs it)'
    try: p = _run(['--dump-dom', 'about:blank'], timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e: return f'chromium did not start: {e}'
    if p.returncode != 0 or '<html' not in p.stdout: return f'chromium did not start (exit {p.returncode}): {p.stderr[-300:]}'
    return None


def render(url:str, png:Path, size:str='1280,720') -> str:
    "Load `url` headless, after its scripts ran: save the window's screenshot to `png` and return the page's DOM."
    p = _run([f'--window-size={size}', f'--screenshot={png}', '--dump-dom', url])
    assert p.returncode == 0 and Path(png).exists(), f'chromium could not render {url}: {p.stderr[-500:]}'
    return p.stdout


def ink(png:Path) -> dict:
    "How much of a screenshot is not its background colour, and how many colours it holds (a blank page: ~0 and 1)."
    import numpy as np
    from matplotlib.image import imread
    px = (imread(png)[..., :3] * 255).round().astype(np.uint8).reshape(-1, 3)
    colours, counts = np.unique(px, axis=0, return_counts=True)
    background = colours[counts.argmax()]
    return dict(ink=float((px != background).any(axis=1).mean()), colours=int(len(colours)))


def keep(png:Path, name:str) -> Path|None:
    "Copy a screenshot a test checked to `$AGENTFORGE_SCREENSHOTS/name` when that folder is set; the copy's path."
    if not os.environ.get(KEEP): return None
    dest = Path(os.environ[KEEP]) / name
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(png, dest)
    return dest

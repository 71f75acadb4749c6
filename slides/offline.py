"""Find what a built deck or site page would fetch from the web.

The rule (shared by `make slides`, `make docs` and their tests): a built file may not name an `http://` or `https://`
URL in a position a browser fetches from or follows — an attribute `src`, `href`, `srcset`, `poster`, `data`,
`action`, `formaction`, `xlink:href`, or reveal.js's lazy `data-src` / `data-background-*`, a CSS `url(...)` or `@import`, a script's `import(...)`, `fetch(...)` or
`importScripts(...)` — in the file itself or inside any text-like `data:` URI it embeds (CSS, JavaScript, SVG,
HTML), which are decoded and scanned the same way. A URL written as prose (a citation, an XML namespace such as
`xmlns="http://www.w3.org/..."`, a URL in a code sample, where HTML escaping turns its quotes into `&quot;`) is not
an asset and is allowed. So the decks and pages link nothing on the web: a reference is cited as text.
"""
import base64, re, urllib.parse
from pathlib import Path

_ATTR = r'(?:src|href|srcset|poster|data|action|formaction|xlink:href|data-src|data-background[\w-]*|data-preview-link)'
ASSET_RE = re.compile(
    r'(?<![\w:-])' + _ATTR + r'''\s*=\s*["']?\s*(https?://[^\s"'<>)]*)'''
    r'''|url\(\s*["']?\s*(https?://[^\s"')]*)'''
    r'''|@import\s+(?:url\()?\s*["']\s*(https?://[^\s"')]*)'''
    r'''|\b(?:import|fetch|importScripts)\(\s*["'`]\s*(https?://[^\s"'`)]*)''',
    re.IGNORECASE)
DATA_RE = re.compile(r'''data:([\w.+-]+/[\w.+-]+)((?:;[\w-]+=[^;,"']*)*)(;base64)?,([^"')\s]*)''')
TEXT_MIME = re.compile(r'^(text/|application/(javascript|ecmascript|x-javascript|json|xhtml\+xml)|image/svg\+xml)')


def _decoded(mime:str, b64:bool, payload:str) -> str|None:
    "The text of a `data:` URI's payload when its type is text-like, else None."
    if not TEXT_MIME.match(mime.lower()): return None
    try: raw = base64.b64decode(payload + '=' * (-len(payload) % 4)) if b64 else urllib.parse.unquote(payload).encode()
    except ValueError: return None
    return raw.decode('utf-8', errors='replace')


def remote_assets(text:str, _depth:int=0) -> list[str]:
    "Every http(s) URL in an asset position of `text`, including inside text-like data: URIs (decoded)."
    found = [next(g for g in m.groups() if g) for m in ASSET_RE.finditer(text)]
    if _depth < 3:
        for m in DATA_RE.finditer(text):
            inner = _decoded(m.group(1), bool(m.group(3)), m.group(4))
            if inner: found += remote_assets(inner, _depth + 1)
    return found


def scan_tree(root:Path, suffixes=('.html', '.htm', '.css', '.js', '.svg')) -> dict[str, list[str]]:
    "Map each built file under `root` that names a remote asset to those URLs."
    bad = {}
    for p in sorted(Path(root).rglob('*')):
        if p.is_file() and p.suffix.lower() in suffixes:
            urls = remote_assets(p.read_text(encoding='utf-8', errors='replace'))
            if urls: bad[str(p)] = urls
    return bad

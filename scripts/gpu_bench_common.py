"""GPU benchmark runner, shared part: the packed folder, a manifest entry's inputs, the error
measure, --budget-s step timeouts and the worker processes every other runner module starts."""
import json
import os
import signal
import subprocess
import sys
import time

# The folder of the runner and its modules; in a packed folder also that of manifest.json, models/
# and the payload.
HERE = os.path.dirname(os.path.abspath(__file__))
EAGER_MODES = ("eager", "eager_attn")  # eager_attn: HF models with attn_implementation="eager"

# The runner's own file (gpu_bench.py in a packed folder), set by it when it starts. Every worker
# (--torch-worker, --export-model, --export-hf, --attention-worker) is that file run again: its
# folder is then the worker's sys.path[0], so the worker finds these modules as the runner did.
RUNNER = None


def worker_command(flag, spec_file):
    """The command line of one worker process: the runner's file with flag, under this python."""
    if RUNNER is None:
        raise RuntimeError("gpu_bench_common.RUNNER is not set: start workers from the runner")
    return [sys.executable, RUNNER, flag, spec_file]


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def entry_inputs(e):
    """[{name, shape, dtype, ...}] of a manifest entry (CNN entries name one float input)."""
    return e.get("inputs") or [{"name": e["input"], "shape": e["shape"], "dtype": "float32"}]


# A 5x7 bitmap font (rows top to bottom, '#' ink) for the OCR models' text images.
FONT = {
    "A": ".###.,#...#,#...#,#####,#...#,#...#,#...#", "C": ".###.,#...#,#....,#....,#....,#...#,.###.",
    "D": "####.,#...#,#...#,#...#,#...#,#...#,####.", "E": "#####,#....,#....,####.,#....,#....,#####",
    "I": ".###.,..#..,..#..,..#..,..#..,..#..,.###.", "L": "#....,#....,#....,#....,#....,#....,#####",
    "M": "#...#,##.##,#.#.#,#.#.#,#...#,#...#,#...#", "N": "#...#,##..#,#.#.#,#..##,#...#,#...#,#...#",
    "O": ".###.,#...#,#...#,#...#,#...#,#...#,.###.", "P": "####.,#...#,#...#,####.,#....,#....,#....",
    "R": "####.,#...#,#...#,####.,#.#..,#..#.,#...#", "S": ".####,#....,#....,.###.,....#,....#,####.",
    "T": "#####,..#..,..#..,..#..,..#..,..#..,..#..", "X": "#...#,#...#,.#.#.,..#..,.#.#.,#...#,#...#",
    "0": ".###.,#...#,#..##,#.#.#,##..#,#...#,.###.", "1": "..#..,.##..,..#..,..#..,..#..,..#..,.###.",
    "2": ".###.,#...#,....#,...#.,..#..,.#...,#####", "5": "#####,#....,####.,....#,....#,#...#,.###.",
    "6": ".###.,#....,#....,####.,#...#,#...#,.###.", "7": "#####,....#,...#.,..#..,.#...,.#...,.#...",
    "8": ".###.,#...#,#...#,.###.,#...#,#...#,.###.", "9": ".###.,#...#,#...#,.####,....#,....#,.###.",
    " ": ".....,.....,.....,.....,.....,.....,.....",
}
TEXT_LINES = ("ORTC DETECTS TEXT", "MODEL 2026 SCAN", "PRINTED LINES 0158", "CAMERA TEXT 79",
              "SIMPLE DATA 6", "MORE LINES")


def render_text_image(height, width, rng):
    """Dark text on a light, slightly noisy page, as a camera would see a printed line: uint8
    [height, width]. A line per 1.6 character heights from the top (one line for the short
    recognizer and classifier inputs), glyphs scaled so a character is about 60% of the height of
    a single-line input."""
    import numpy as np
    page = np.full((height, width), 235, np.float32) + rng.normal(0, 6, (height, width))
    scale = max(1, int(height * 0.6 / 7)) if height < 100 else 4
    lines = TEXT_LINES if height >= 100 else TEXT_LINES[:1]
    y = (height - 7 * scale) // 2 if height < 100 else 40
    for li, text in enumerate(lines):
        x = 8 + 12 * (li % 3)
        for ch in text:
            glyph = FONT.get(ch, FONT[" "]).split(",")
            if x + 5 * scale > width:
                break
            for r, row in enumerate(glyph):
                for c, ink in enumerate(row):
                    if ink == "#":
                        page[y + r * scale:y + (r + 1) * scale, x + c * scale:x + (c + 1) * scale] = 30
            x += 6 * scale
        y += int(1.6 * 7 * scale) + 24
        if y + 7 * scale > height:
            break
    return np.clip(page, 0, 255).astype(np.uint8)


def text_image_input(shape, norm, rng):
    """[N, 3, H, W] float32 of a rendered text image, normalized as PaddleOCR's preprocessing:
    'imagenet' (the detector: mean 0.485/0.456/0.406, std 0.229/0.224/0.225) or 'half' (the
    recognizer and classifier: (x / 255 - 0.5) / 0.5)."""
    import numpy as np
    gray = render_text_image(shape[2], shape[3], rng).astype(np.float32) / 255.0
    img = np.stack([gray] * 3)
    if norm == "imagenet":
        mean, std = np.array([0.485, 0.456, 0.406], np.float32), np.array([0.229, 0.224, 0.225], np.float32)
        img = (img - mean[:, None, None]) / std[:, None, None]
    else:
        img = (img - 0.5) / 0.5
    return np.broadcast_to(img, shape).astype(np.float32).copy()


def make_inputs(e, seed, wd):
    """Writes the entry's inputs as .npy into wd: [(name, path)]."""
    import numpy as np
    rng = np.random.default_rng(seed)
    feeds = []
    for i in entry_inputs(e):
        if i.get("fill") == "ids":  # token ids, uniform in [0, vocab)
            x = rng.integers(0, i["high"], i["shape"]).astype(i["dtype"])
        elif i.get("fill") == "text_image":  # the OCR models: an image of printed text
            x = text_image_input(i["shape"], i.get("norm", "half"), rng)
        elif i.get("fill") == "mask":  # attention mask: ones, the last `padding` positions 0
            x = np.ones(i["shape"], i["dtype"])
            if i.get("padding"):
                x[..., -i["padding"]:] = 0
        else:
            x = rng.uniform(-1, 1, i["shape"]).astype(i["dtype"])
        path = os.path.join(wd, f"input_{i['name']}.npy" if e.get("inputs") else "input.npy")
        np.save(path, x)
        feeds.append((i["name"], path))
    return feeds


def rel_l2(got, ref):
    import numpy as np
    got, ref = np.asarray(got, np.float64), np.asarray(ref, np.float64)
    if got.shape != ref.shape:
        return float("inf")
    return float(np.linalg.norm(got - ref) / max(np.linalg.norm(ref), 1e-30))


# ------------------------------------------------------------------- budget (--budget-s) helpers
RESERVE_S = 5         # seconds kept at the end of --budget-s for writing the results


def step_timeout(a, default):
    """Timeout of one step: its default, cut to what --budget-s has left (<= 0: skip the step)."""
    return min(default, a.hard_end - RESERVE_S - time.time())


def export_folder(work):
    """Where models exported on this machine go: models/ beside the runner (kept for later runs),
    else the work folder's when that is read-only."""
    d = os.path.join(HERE, "models")
    try:
        os.makedirs(d, exist_ok=True)
        if not os.access(d, os.W_OK):
            raise OSError("read-only")
    except OSError:
        d = os.path.join(work, "models")
        os.makedirs(d, exist_ok=True)
    return d


def export_once(name, key, record, files, flag, spec, a, work, logf, what):
    """(onnx path, weights path, info) of a model the worker `flag` exports from `spec` into
    files = (onnx path, weights path): the files a previous run exported for the same record
    (stamped beside them under key), else exported now; info has "error" when that failed."""
    onnx_path, weights = files
    stamp = onnx_path[:-len(".onnx")] + ".export.json"
    try:
        done = json.load(open(stamp))
        if done.get(key) == record and all(os.path.exists(f) for f in files):
            return onnx_path, weights, {**done["info"], "source": "exported here earlier"}
    except (OSError, ValueError):
        pass
    log(f"{name}: exporting with this machine's {what}")
    spec_file = os.path.join(work, f"export_{name}.json")
    with open(spec_file, "w") as f:
        json.dump(spec, f)
    info = run_export_worker(flag, spec_file, a, logf)
    if "error" in info:
        return onnx_path, weights, info
    with open(stamp, "w") as f:
        json.dump({key: record, "info": info}, f)
    return onnx_path, weights, {**info, "source": "exported here"}


def run_export_worker(flag, spec_file, a, logf):
    """Runs one export worker (--export-model, --export-torchvision) within the budget: the info
    its EXPORTED line gives, or {"error": ...} naming the skip, the timeout or its last log line."""
    timeout = step_timeout(a, a.export_timeout)
    if timeout <= 0:
        return {"error": "export: skipped, --budget-s spent"}
    try:
        r = subprocess.run(worker_command(flag, spec_file), stdout=subprocess.PIPE, stderr=logf, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"export: timeout after {timeout:.0f} s"}
    done = [line for line in r.stdout.splitlines() if line.startswith("EXPORTED ")]
    if r.returncode or not done:
        logf.flush()
        tail = open(logf.name, errors="replace").read().strip().splitlines()[-1:] or [f"exit {r.returncode}"]
        return {"error": f"export with this machine's torch failed: {tail[0][:300]}"}
    return json.loads(done[-1][len("EXPORTED "):])


def run_lines(args, timeout, logf):
    """Runs a worker process that prints `KIND {json}` lines: ([(kind, obj)], error or None). Past
    the timeout its process group is killed and the lines it printed until then are kept."""
    if timeout <= 0:
        return [], "skipped: --budget-s spent"
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=logf, text=True, start_new_session=True)
    err = None
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        err = f"timeout after {timeout:.0f} s"
    lines = []
    for line in out.splitlines():
        kind, _, body = line.partition(" ")
        if kind in ("INFO", "START", "RESULT", "EXPORTED"):
            try:
                lines.append((kind, json.loads(body)))
            except ValueError:
                pass  # a stray line of torch's own output
    if p.returncode and not err:
        logf.flush()
        tail = open(logf.name, errors="replace").read().strip().splitlines()[-1:] or [""]
        err = f"worker exited with code {p.returncode}: {tail[0][:300]}"
    return lines, err


def models_dir(work):
    """models/ beside this script, or the work folder's when that is read-only."""
    d = os.path.join(HERE, "models")
    try:
        os.makedirs(d, exist_ok=True)
        if os.access(d, os.W_OK):
            return d
    except OSError:
        pass
    d = os.path.join(work, "models")
    os.makedirs(d, exist_ok=True)
    return d

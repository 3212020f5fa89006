"""The Markdown page: tables, number formats, figures, and files written whole or not at all."""
import itertools
import json
import os


def fmt_time(us):
    return f"{us / 1000:.2f} ms" if us >= 1000 else f"{us:.1f} µs"


EMPTY = ("–", "", "– / –")  # what a cell holds where the results have no figure


MAX_COLUMNS = 8  # the widest table a page shows whole


def table(header, rows, keys=None):
    """A Markdown table; a column with no figure in any row is left out. Wider than MAX_COLUMNS, it is
    split into tables of at most that many, each repeating the first `keys` columns (the row's name:
    one column unless given), so that no page needs scrolling sideways."""
    keep = [i for i in range(len(header)) if not rows or any(str(r[i]) not in EMPTY for r in rows)]
    if len(keep) > MAX_COLUMNS:
        keys = 1 if keys is None else keys
        lead, rest = keep[:keys], keep[keys:]
        step = MAX_COLUMNS - keys
        return "\n".join(
            table(
                [header[i] for i in lead + rest[s : s + step]],
                [[r[i] for i in lead + rest[s : s + step]] for r in rows],
            )
            for s in range(0, len(rest), step)
        )
    lines = ["| " + " | ".join(header[i] for i in keep) + " |", "|" + "---|" * len(keep)]
    lines += ["| " + " | ".join(str(r[i]) for i in keep) + " |" for r in rows]
    return "\n".join(lines) + "\n"


# A fraction of copy is a bandwidth finding only where the working set (the bytes read and written)
# is at least this many times the L2: under it, part of the reads can be the L2's, and part of the
# output's write-back can land after the timed kernel has ended, which puts kernels above the copy.
PAST_L2 = 8


def of_copy(frac, bytes_moved, l2_bytes):
    """A fraction of copy as the report prints it: plain where it is a bandwidth finding; in parentheses
    with a dagger where the working set is under PAST_L2 × the L2, or the figure is above the copy
    itself (an artefact to find, not a finding)."""
    finding = l2_bytes and bytes_moved >= PAST_L2 * l2_bytes and frac <= 1
    return f"{frac:.3f}" if finding else f"({frac:.3f}†)"


def of_copy_note(l2_bytes):
    return (
        f"† not a bandwidth finding: the working set is under {PAST_L2}× the L2"
        f" ({PAST_L2 * l2_bytes / 2**20:.0f} MiB), or the figure is above the copy's own bandwidth."
    )


def anchor(heading):
    """The link GitHub gives a Markdown heading."""
    text = "".join(c for c in heading.lower() if c.isalnum() or c in " -_")
    return "#" + text.replace(" ", "-")


class Detail(str):
    """A part of a section that a reader does not need to reach the answer (a full table, a
    breakdown): it goes to the details page under its own heading, and the report keeps a link."""

    def __new__(cls, heading, text):
        part = super().__new__(cls, f"### {heading}\n\n{text}")
        part.heading = heading
        return part


class Parts(list):
    """What a section writes aside for doc.detail, with the Document's add: "\\n".join(parts) is its text."""

    add = list.append


def pow2(n):
    n = int(n)
    return f"2^{n.bit_length() - 1}" if n > 0 and n & (n - 1) == 0 else str(n)


class _Unmade:
    """A figure, axes or row of axes that is not made (the report without its figures): every
    attribute, call and item is itself, and a row of them is as long as what it is zipped with."""

    def __getattr__(self, name):
        return self

    def __call__(self, *args, **kwargs):
        return self

    def __getitem__(self, key):
        return self

    def __iter__(self):
        return itertools.repeat(self)


class WriteError(Exception):
    """A file that could not be written (a folder that cannot be made, a full disk, a file that cannot
    be replaced): its path and why. Nothing of the report is then moved into place."""


def written(path, write):
    """write(tmp) into path + ".tmp", then that file moved to path: path is the old file or the whole
    new one, never part of one. A failure is a WriteError naming path, the temporary removed."""
    tmp = path + ".tmp"
    try:
        write(tmp)
        os.replace(tmp, path)
    except OSError as e:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise WriteError(f"cannot write {path}: {e.strerror or e} (it is left as it was)") from e


def write_json(path, doc):
    """doc as JSON at path, written whole (written())."""

    def write(tmp):
        with open(tmp, "w") as f:
            json.dump(doc, f, indent=1)

    written(path, write)


class _NoFigures:
    """pyplot's two calls the report makes, making nothing."""

    def subplots(self, *args, **kwargs):
        return _Unmade(), _Unmade()

    def close(self, fig):
        pass


class Document:
    """The report being written: its Markdown parts and the files beside it. Nothing reaches its
    final name until write(): every file is written under a temporary name first."""

    def __init__(self, out_dir, figures=True):
        if figures:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        else:  # each figure's link is written, its image neither drawn nor made: no matplotlib at all
            plt = _NoFigures()
        self.plt, self.out_dir, self.parts, self.files = plt, out_dir, [], {}
        self.draw = figures

    def add(self, text):
        self.parts.append(text)

    def detail(self, heading, text, pointer):
        """Puts `text` on the details page under `heading`; here, the line `pointer` and a link to it."""
        self.add(f"{pointer}: [{heading}]({anchor(heading)}).\n")
        self.parts.append(Detail(heading, text))

    def figure(self, name, fig, caption):
        if self.draw:
            path = os.path.join(self.out_dir, name)
            fig.tight_layout()
            self._temporary(path, path + ".tmp.png", lambda tmp: fig.savefig(tmp, dpi=110))
        self.plt.close(fig)
        self.add(f"![{caption}]({name})\n\n*{caption}*\n")

    def text_file(self, name, text):
        """Writes a text file under a temporary name; write() renames it with the rest."""
        path = os.path.join(self.out_dir, name)

        def write(tmp):
            with open(tmp, "w") as f:
                f.write(text)

        self._temporary(path, path + ".tmp", write)
        return path

    def _temporary(self, path, tmp, write):
        """write(tmp), kept to be moved to path by write(); where it fails, every temporary so far is
        removed and a WriteError names path: nothing of the report is moved into place."""
        try:
            os.makedirs(self.out_dir, exist_ok=True)
            write(tmp)
        except OSError as e:
            for t in [*self.files.values(), tmp]:
                if os.path.exists(t):
                    os.remove(t)
            self.files.clear()
            raise WriteError(
                f"cannot write {path}: {e.strerror or e} (no file of the report is replaced)"
            ) from e
        self.files[path] = tmp

    def write(self, name):
        """Writes the report as `name`, then moves every file into place."""
        path = self.text_file(name, "\n".join(self.parts))
        for final, temporary in self.files.items():
            try:
                os.replace(temporary, final)
            except OSError as e:
                raise WriteError(f"cannot write {final}: {e.strerror or e}") from e
        return path

"""Run folders you can trust: one owner at a time, a manifest, checksummed parts, no deletion of others' files.

Every study writes its output folder through :class:`RunFolder` (``ldpsim run``: kind ``"run"``,
``ldpsim sweep``/``check``: kind ``"sweep"``, …), opened with the :class:`Layout` the study declares:

* **Lock.** ``.lock`` is created atomically (written to a temporary name, then hard-linked: the link
  fails when a lock exists) and holds the owner's pid, host and command. A second run into the folder
  is refused with a message naming the holder. A lock whose pid is no longer alive on this host is
  stale (a killed run): it is removed, and the run says so.
* **Manifest.** ``manifest.json`` (written durably) names the folder's kind, the scenario's hash
  (``fingerprint``) and ``seed``, the ldpsim version, the command, and ``status``: ``"running"`` from
  the moment the run starts, ``"complete"`` only after every output is on disk — then with every
  file's size and SHA-256. A killed run therefore never leaves a folder that claims to be complete.
* **Journal.** ``parts.jsonl`` gets one durable line per finished part (path, size, SHA-256,
  fingerprint). A resumed sweep trusts a part only when it is in the journal *and* its size and
  checksum still match; a damaged or unlisted part is deleted (it is ours) and recomputed, and the
  run says which.
* **Ownership.** A folder is adopted only when it is new, empty, or holds a manifest of the same
  kind; an unrelated non-empty folder (or another kind's run folder) is refused. Clearing deletes
  only files ldpsim writes — the manifest's and journal's entries, the layout's output names and
  part patterns inside its own sub-folders — one ``unlink`` at a time, never ``rmtree``, never
  following a symbolic link (a link where ldpsim expects its own file or folder is an error). The
  manifest of a finished folder lists only files this process wrote (:func:`ldpsim.runtime.durable.wrote`)
  and the parts its worker processes wrote: a file somebody drops in while the run goes is never adopted.
  :func:`own_files` lists what a shared report may embed.

Durable writes (temp, fsync, rename, fsync folder) are :mod:`ldpsim.runtime.durable`'s.
"""

from __future__ import annotations

import errno
import fnmatch
import json
import os
import socket
import stat
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from ldpsim.runtime import durable
from ldpsim.runtime.errors import InputError
from ldpsim.runtime.plain import control_character

FORMAT = "ldpsim-run-folder/1"
MANIFEST, JOURNAL, LOCK = "manifest.json", "parts.jsonl", ".lock"


class RunFolderError(InputError):
    """The output folder cannot be used (unrelated content, another run's results, a link, a lock)."""


class RunFolderLocked(RunFolderError):
    """Another live process owns the folder."""


@dataclass(frozen=True)
class Layout:
    """What a kind of run folder holds, declared by the study that writes it: the folder's ``kind`` (named in
    its manifest), top-level file names (glob) and its own sub-folders' part patterns. Clearing deletes only
    these (and what the manifest and journal list); the run folder itself knows no study's file names."""

    kind: str
    files: tuple[str, ...] = ()
    dirs: dict = field(default_factory=dict)


def read_manifest(root) -> dict | None:
    """The folder's manifest, or None when it has none (or an unreadable one)."""
    path = Path(root) / MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("format") == FORMAT else None


def _lstat(path):
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None


#: errno values of a folder that cannot be written (permission, read-only file system)
_NOT_WRITABLE = {errno.EACCES, errno.EPERM, errno.EROFS}


def _os_reason(exc: OSError) -> str:
    """An ``OSError`` in words: what is wrong, and with which path."""
    what = {errno.EACCES: "permission denied", errno.EPERM: "permission denied", errno.EROFS: "read-only file system",
            errno.ENOTDIR: "a file is in the way where a folder is needed", errno.ENOSPC: "no space left on the device",
            errno.ENAMETOOLONG: "the name is too long", errno.ELOOP: "a symbolic link is in the way"}.get(exc.errno)
    where = f" ({exc.filename})" if exc.filename else ""
    return f"{what}{where}" if what else str(exc)


def make_out_folder(root, create: bool = True) -> Path:
    """The output folder ``root`` (``--out``), created when missing; every problem is a :class:`RunFolderError`
    naming ``--out``: an empty name, a control character in it (a newline), a symbolic link, a file in the way,
    permission denied, a read-only file system. With ``create=False`` (``--dry-run``) nothing is created: the nearest existing folder on the way
    must be a folder this process may write into."""
    root = Path(root)
    if not str(root).strip() or str(root) == ".":
        raise RunFolderError(f"--out must name a folder; got {str(root)!r}")
    if control_character(str(root)):
        raise RunFolderError(f"--out must not contain a control character ({control_character(str(root))}); "
                             f"got {str(root)!r}")
    if root.is_symlink():
        raise RunFolderError(f"--out {root} is a symbolic link; ldpsim never writes through one: give the "
                             "folder it points to, or another folder")
    if root.exists() and not root.is_dir():
        raise RunFolderError(f"--out {root} is a file, not a folder")
    if not create:
        near = next(p for p in (root, *root.absolute().parents) if p.exists() or p.is_symlink())
        if not near.is_dir() or near.is_symlink():
            raise RunFolderError(f"--out {root} cannot be used as an output folder: a file is in the way where a "
                                 f"folder is needed ({near})")
        if not os.access(near, os.W_OK | os.X_OK):
            raise RunFolderError(f"--out {root} cannot be used as an output folder: permission denied ({near})")
        return root
    try:
        return durable.make_dirs(root)
    except OSError as exc:
        raise RunFolderError(f"--out {root} cannot be used as an output folder: {_os_reason(exc)}") from None


def read_journal(root) -> dict[str, dict]:
    """The journal's entries (path → {path, size, sha256, fingerprint}); a torn last line is skipped."""
    entries = {}
    try:
        lines = (Path(root) / JOURNAL).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return entries
    for line in lines:
        try:
            e = json.loads(line)
        except ValueError:
            continue  # a torn last line of a killed run
        if isinstance(e, dict) and isinstance(e.get("path"), str):
            entries[e["path"]] = e
    return entries


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _holder_text(holder: dict) -> str:
    return (f"pid {holder.get('pid')} on {holder.get('host')} since {holder.get('started')}: "
            f"{holder.get('command')}")


class RunFolder:
    """An open, locked run folder; use :meth:`open` (a context manager releases the lock)."""

    def __init__(self, root: Path, layout: Layout, identity: dict, command: str, log=None):
        if not isinstance(layout, Layout):
            raise TypeError(f"RunFolder takes the study's Layout (its module's LAYOUT), not {layout!r}")
        self.root, self.kind, self.identity, self.command = root, layout.kind, identity, command
        self.layout = layout
        self.log = log or (lambda msg: print(msg, file=sys.stderr))
        self.parts: dict[str, dict] = {}
        self.notes: list[str] = []
        self._locked = False
        self._before: set[str] = set()
        self._recorded: set[str] = set()  # recorded by this process (the others' entries come from the journal)

    # ---- opening -------------------------------------------------------------------------------
    @classmethod
    def open(cls, root, layout: Layout, identity: dict, *, resume: bool = False, replace: bool = False,
             keep_finished: bool = False, command: str | None = None, log=None) -> "RunFolder":
        """Lock and adopt ``root`` for a run of ``layout.kind`` with ``identity`` (``fingerprint``, ``seed``).

        Parameters
        ----------
        root : path-like
            The output folder; created when missing.
        layout : Layout
            The folder's kind and the files it holds, declared by the study (its module's ``LAYOUT``).
        identity : dict
            ``{"fingerprint": str, "seed": int}``: which results the folder will hold.
        resume : bool
            Keep (verified) parts of the same identity; otherwise everything ldpsim wrote is cleared.
        replace : bool
            Clear the results of a *different* identity; otherwise such a folder is refused.
        keep_finished : bool
            Refuse a finished folder of this kind whatever its identity, unless ``replace``: for results
            written in one go (a comparison, a benchmark), where rerunning means replacing them.
        command : str, optional
            Recorded in the lock and manifest (default: ``sys.argv``).

        Raises
        ------
        RunFolderError
            Unrelated content, another kind, another identity without ``replace``, a symbolic link
            where ldpsim keeps its own files, or a live lock (:class:`RunFolderLocked`).
        """
        root = make_out_folder(root)
        try:
            folder = cls(root, layout, dict(identity), command or " ".join(sys.argv), log)
            folder._lock()
        except OSError as exc:
            raise RunFolderError(f"--out {root} cannot be used as an output folder: {_os_reason(exc)}") from None
        try:
            folder._adopt(resume, replace, keep_finished)
        except OSError as exc:
            folder.release()
            raise RunFolderError(f"--out {root} cannot be used as an output folder: {_os_reason(exc)}") from None
        except BaseException:
            folder.release()
            raise
        return folder

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, tb):
        self.release()
        if isinstance(exc, OSError) and exc.errno in _NOT_WRITABLE:
            raise RunFolderError(f"{self.root} is read-only or no longer writable ({_os_reason(exc)}): the run "
                                 "stopped and its manifest still says running; make the folder writable and rerun")

    def _lock(self) -> None:
        lock = self.root / LOCK
        holder = {"pid": os.getpid(), "host": socket.gethostname(), "command": self.command,
                  "started": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        tmp = self.root / f".lock.{os.getpid()}.tmp"
        durable.write_text(tmp, json.dumps(holder))
        try:
            for _ in range(2):
                try:
                    os.link(tmp, lock)
                    self._locked = True
                    durable.fsync_dir(self.root)
                    return
                except FileExistsError:
                    other = self._read_lock()
                    if other.get("pid") == os.getpid() and other.get("host") == holder["host"]:
                        raise RunFolderLocked(f"{self.root} is already open in this process") from None
                    if other.get("host") == holder["host"] and isinstance(other.get("pid"), int) \
                            and not _alive(other["pid"]):
                        self.log(f"{self.root}: removing the stale lock of a run that is no longer running "
                                 f"({_holder_text(other)})")
                        os.unlink(lock)
                        continue
                    raise RunFolderLocked(f"{self.root} is in use by another ldpsim run ({_holder_text(other)}); "
                                          f"wait for it, or remove {lock} if that process is gone") from None
            raise RunFolderLocked(f"{self.root}: could not take the lock {lock}")
        finally:
            tmp.unlink(missing_ok=True)

    def _read_lock(self) -> dict:
        try:
            data = json.loads((self.root / LOCK).read_text(encoding="utf-8"))
            return data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            return {}

    def release(self) -> None:
        """Remove the lock (only when this object holds it; a folder turned read-only keeps it, said in the log:
        its pid is gone after this process, so the next run takes it over as stale)."""
        if self._locked:
            self._locked = False
            try:
                (self.root / LOCK).unlink(missing_ok=True)
            except OSError as exc:
                if exc.errno not in _NOT_WRITABLE:
                    raise
                self.log(f"{self.root}: could not remove the lock {LOCK} ({_os_reason(exc)})")

    def _foreign_entries(self) -> list[str]:
        return sorted(e.name for e in os.scandir(self.root) if e.name != LOCK)

    def _adopt(self, resume: bool, replace: bool, keep_finished: bool = False) -> None:
        old = read_manifest(self.root)
        if old is None:
            entries = self._foreign_entries()
            if entries:
                shown = ", ".join(entries[:5]) + (" …" if len(entries) > 5 else "")
                raise RunFolderError(
                    f"--out {self.root} is not empty and is not an ldpsim {self.kind} folder (no {MANIFEST}; it "
                    f"holds {shown}); ldpsim writes only into a new, empty or own folder: choose another one")
        elif old.get("kind") != self.kind:
            raise RunFolderError(f"--out {self.root} holds an ldpsim {old.get('kind')} folder, not a {self.kind} "
                                 f"folder; choose another one")
        elif keep_finished and not replace and old.get("status") == "complete":
            raise RunFolderError(f"--out {self.root} holds a finished {self.kind} result; use another folder, or "
                                 "--force to replace it")
        else:
            same = all(old.get(k) == v for k, v in self.identity.items())
            finished_any = any("/" in p for p in read_journal(self.root)) or old.get("status") == "complete"
            if not same and not replace and finished_any:
                raise RunFolderError(
                    f"--out {self.root} holds results of a different scenario or seed (fingerprint "
                    f"{old.get('fingerprint')}, seed {old.get('seed')}; now {self.identity.get('fingerprint')}, "
                    f"seed {self.identity.get('seed')}); use another folder, or --force to replace them")
            if same and resume:
                self._verify(old)
            else:
                self.clear(old)
        self._before = set(self._all_files())
        self._write_manifest("running")

    def _all_files(self):
        """Relative paths of every regular file in the folder (symbolic links neither listed nor followed)."""
        for dirpath, _dirs, files in os.walk(self.root, followlinks=False):
            for name in files:
                path = os.path.join(dirpath, name)
                if stat.S_ISREG(os.lstat(path).st_mode):
                    yield os.path.relpath(path, self.root)

    # ---- clearing and verifying ----------------------------------------------------------------
    def _inside(self, rel: str) -> Path:
        """``root/rel`` after checking that no component of ``rel`` is a symbolic link."""
        path = self.root
        for part in Path(rel).parts:
            if part in ("..", "/") or os.path.isabs(part):
                raise RunFolderError(f"{self.root}: refusing the path {rel!r} (outside the folder)")
            path = path / part
            st = _lstat(path)
            if st is not None and stat.S_ISLNK(st.st_mode):
                raise RunFolderError(f"{path} is a symbolic link, which ldpsim did not create; ldpsim never "
                                     "follows or deletes one: remove it, or choose another folder")
        return path

    def _unlink_own(self, rel: str) -> bool:
        path = self._inside(rel)
        st = _lstat(path)
        if st is None:
            return False
        if not stat.S_ISREG(st.st_mode):
            raise RunFolderError(f"{path} is not a regular file; ldpsim expected its own output there")
        path.unlink()
        return True

    def _own_files(self, manifest: dict | None) -> list[str]:
        """Relative paths of every file ldpsim wrote here (manifest, journal, known names, part patterns)."""
        found = set((manifest or {}).get("files", {})) | set(read_journal(self.root))
        for name in os.listdir(self.root):
            if any(fnmatch.fnmatch(name, pat) for pat in self.layout.files) or \
                    (name.startswith(".") and name.endswith(".tmp") and name != LOCK):
                found.add(name)
        for folder, patterns in self.layout.dirs.items():
            base = self._inside(folder)
            if not base.is_dir():
                continue
            for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
                for d in list(dirnames):
                    if os.path.islink(os.path.join(dirpath, d)):
                        self._inside(os.path.relpath(os.path.join(dirpath, d), self.root))
                for name in filenames:
                    rel = os.path.relpath(os.path.join(dirpath, name), base)
                    tmp = name.startswith(".") and name.endswith(".tmp")
                    if tmp or any(fnmatch.fnmatch(rel, pat) for pat in patterns):
                        found.add(f"{folder}/{rel}")
        return sorted(found)

    def clear(self, manifest: dict | None = None) -> int:
        """Delete every file ldpsim wrote here (see :meth:`_own_files`), then its emptied sub-folders."""
        n = 0
        for rel in self._own_files(manifest):
            if rel in (MANIFEST, LOCK):
                continue
            n += self._unlink_own(rel)
        (self.root / JOURNAL).unlink(missing_ok=True)
        for folder in self.layout.dirs:
            _remove_empty_dirs(self._inside(folder))
        self.parts = {}
        durable.fsync_dir(self.root)
        return n

    def remove(self, rel: str) -> int:
        """Delete the files ldpsim wrote under the sub-folder ``rel`` (a finished cell's scratch store), then
        the folders that emptied, up to the layout's own folder; returns the number of files deleted."""
        prefix = rel.rstrip("/") + "/"
        n = sum(self._unlink_own(f) for f in self._own_files(None) if f.startswith(prefix))
        base = self._inside(rel)
        _remove_empty_dirs(base)
        if base.parent != self.root and base.parent.is_dir() and not os.listdir(base.parent):
            os.rmdir(base.parent)
        durable.fsync_dir(self.root)
        return n

    def _verify(self, manifest: dict) -> None:
        """Keep the journal's parts whose size and checksum match; delete damaged and unlisted parts."""
        listed = {p: e for p, e in read_journal(self.root).items()
                  if e.get("fingerprint") == self.identity.get("fingerprint")}
        damaged = []
        for rel in self._own_files(None):
            if rel in (MANIFEST, JOURNAL):
                continue
            entry = listed.get(rel)
            path = self._inside(rel)
            st = _lstat(path)
            if st is None:
                continue  # listed but missing: counted below
            ok = entry is not None and stat.S_ISREG(st.st_mode) and st.st_size == entry.get("size") and \
                durable.sha256_file(path) == entry.get("sha256")
            if ok:
                self.parts[rel] = entry
                continue
            if "/" not in rel:
                continue  # a top-level output is rewritten by the run, never deleted here
            if entry is not None:
                damaged.append(rel)
            self._unlink_own(rel)
        for rel in set(listed) - set(self.parts) - set(damaged):
            if "/" in rel:
                damaged.append(rel)  # listed but missing
        if damaged:
            self.notes.append(f"{len(damaged)} damaged or missing part(s) will be recomputed: "
                              f"{', '.join(sorted(damaged)[:5])}{' …' if len(damaged) > 5 else ''}")
            self.log(f"{self.root}: {self.notes[-1]}")
        lines = "".join(json.dumps(e) + "\n" for e in self.parts.values())
        durable.write_text(self.root / JOURNAL, lines)

    # ---- writing -------------------------------------------------------------------------------
    def path(self, rel: str) -> Path:
        """``root/rel`` for writing (its folders created; no symbolic link on the way)."""
        path = self._inside(rel)
        durable.make_dirs(path.parent)
        self._inside(rel)
        return path

    def write_text(self, rel: str, text: str) -> Path:
        """Write a top-level or sub-folder file durably and record it."""
        durable.write_text(self.path(rel), text)
        return self.record(rel)

    def record(self, rel: str) -> Path:
        """Journal a finished file (size and SHA-256, durably appended) and return its path."""
        path = self._inside(rel)
        entry = {"path": rel, "size": path.stat().st_size, "sha256": durable.sha256_file(path),
                 "fingerprint": self.identity.get("fingerprint")}
        fd = os.open(self.root / JOURNAL, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0),
                     durable.file_mode())
        try:
            os.write(fd, (json.dumps(entry) + "\n").encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        self.parts[rel] = entry
        self._recorded.add(rel)
        return path

    def finished(self, prefix: str = "") -> set[str]:
        """Relative paths of the verified or newly recorded parts (optionally under ``prefix``)."""
        return {p for p in self.parts if p.startswith(prefix)}

    def finalize(self, adopt: bool = False, others: dict | None = None) -> None:
        """Mark the folder complete: with ``adopt``, first record (fsynced) every file this run wrote and did not
        journal yet: the files this process wrote (:func:`ldpsim.runtime.durable.wrote`) and those that other
        processes of the run wrote, ``others`` (absolute path → SHA-256; a file is adopted only with that
        checksum). A file somebody else put into the folder meanwhile, even one named like a part, is left out
        of the manifest with a note, so it is never taken for ours (nor deleted by a rerun)."""
        if adopt:
            others = others or {}
            foreign = []
            for rel in sorted(self._all_files()):
                if rel in (MANIFEST, JOURNAL, LOCK) or rel.endswith(".tmp") or rel in self._recorded:
                    continue
                path = self._inside(rel)
                key = os.path.abspath(path)
                if durable.wrote(path) or (key in others and others[key] == durable.sha256_file(path)):
                    durable.fsync_file(path)
                    self.record(rel)
                elif rel not in self._before and rel not in self.parts and self._worker_part(rel):
                    foreign.append(rel)
            for folder in {Path(rel).parent for rel in self.parts}:
                durable.fsync_dir(self.root / folder)
            if foreign:
                self.notes.append(f"{len(foreign)} file(s) not written by this run were left out of its manifest "
                                  f"and never read: {', '.join(foreign[:5])}{' …' if len(foreign) > 5 else ''}")
                self.log(f"{self.root}: {self.notes[-1]}")
        self._write_manifest("complete")

    def amend(self, rels) -> None:
        """Add the files ``rels`` (relative paths this process wrote into a finished folder it holds, as
        ``ldpsim plot`` does) to the journal and the complete manifest with their size and SHA-256, replacing
        their earlier entries; everything else in the manifest is kept as it was.

        Raises
        ------
        RunFolderError
            The folder's manifest is not complete (a run still going, or interrupted), or a path is a
            symbolic link or outside the folder.
        """
        manifest = read_manifest(self.root) or {}
        if manifest.get("status") != "complete" or not isinstance(manifest.get("files"), dict):
            raise RunFolderError(f"{self.root} is not a finished run folder (status {manifest.get('status')!r}); "
                                 "files are added only to a complete one")
        for rel in rels:
            self.record(rel)
        files = {**manifest["files"], **{p: {"size": e["size"], "sha256": e["sha256"]} for p, e in self.parts.items()}}
        durable.write_text(self.root / MANIFEST, json.dumps(
            {**manifest, "files": dict(sorted(files.items())), "updated": time.strftime("%Y-%m-%dT%H:%M:%S%z")},
            indent=1) + "\n")

    def _worker_part(self, rel: str) -> bool:
        """Whether ``rel`` is named like a part that shards write: one of the layout's part patterns that lie in
        sub-folders of its own folders (``store/use_case=*/day=*/part-*.parquet``)."""
        folder, _, inner = rel.partition("/")
        return any("/" in pat and fnmatch.fnmatch(inner, pat) for pat in self.layout.dirs.get(folder, ()))

    def _write_manifest(self, status: str) -> None:
        from ldpsim import __version__
        data = {"format": FORMAT, "kind": self.kind, **self.identity, "status": status,
                "ldpsim_version": __version__, "command": self.command,
                "updated": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        if status == "complete":
            data["files"] = {p: {"size": e["size"], "sha256": e["sha256"]} for p, e in sorted(self.parts.items())}
        durable.write_text(self.root / MANIFEST, json.dumps(data, indent=1) + "\n")


def hold(root, command: str | None = None) -> RunFolder:
    """Take only the lock of an existing ldpsim folder (for commands that add to a finished run, like
    ``ldpsim plot``): its manifest and parts are left as they are. Use as a context manager."""
    root = Path(root)
    manifest = read_manifest(root)
    if manifest is None:
        raise RunFolderError(f"{root} is not an ldpsim run folder (no {MANIFEST})")
    identity = {k: manifest[k] for k in ("fingerprint", "seed") if k in manifest}
    folder = RunFolder(root, Layout(manifest.get("kind", "sweep")), identity, command or " ".join(sys.argv))
    folder._lock()
    return folder


def own_files(root, folders=("", "plots")) -> list[str]:
    """Files directly in ``folders`` of the run folder ``root`` that ldpsim wrote and nobody changed since,
    relative to ``root``: listed in the manifest or the journal with the same size and SHA-256, or written by
    this process (:func:`ldpsim.runtime.durable.wrote`). Symbolic links (as files or folders) are never
    listed or followed: what a shared report may embed.

    Parameters
    ----------
    root : path-like
        A run folder.
    folders : sequence of str
        Sub-folders to look into (``""``: the folder itself).
    """
    root = Path(root)
    listed = {**{p: e for p, e in (read_manifest(root) or {}).get("files", {}).items() if isinstance(e, dict)},
              **read_journal(root)}
    found = []
    for sub in folders:
        base = root / sub if sub else root
        st = _lstat(base)
        if st is None or not stat.S_ISDIR(st.st_mode):
            continue
        for entry in sorted(os.scandir(base), key=lambda e: e.name):
            if not entry.is_file(follow_symlinks=False) or entry.name in (MANIFEST, JOURNAL, LOCK):
                continue
            rel = f"{sub}/{entry.name}" if sub else entry.name
            e = listed.get(rel, {})
            if durable.wrote(entry.path) or (e.get("size") == entry.stat(follow_symlinks=False).st_size
                                             and e.get("sha256") == durable.sha256_file(entry.path)):
                found.append(rel)
    return found


def verify_folder(root) -> list[str]:
    """Problems of a finished folder: not complete, or a listed file missing or changed (empty = fine)."""
    root = Path(root)
    manifest = read_manifest(root)
    if manifest is None:
        return [f"{root} has no ldpsim manifest"]
    if manifest.get("status") != "complete":
        return [f"{root} is incomplete (status {manifest.get('status')!r}): its run was interrupted or is running"]
    files = manifest.get("files")
    if not isinstance(files, dict) or not files or not all(isinstance(e, dict) for e in files.values()):
        return [f"{root}: the manifest says complete but lists no files"]
    problems = []
    for rel, e in files.items():
        path = root / rel
        st = _lstat(path)
        if st is None or not stat.S_ISREG(st.st_mode):
            problems.append(f"{rel}: missing")
        elif st.st_size != e["size"] or durable.sha256_file(path) != e["sha256"]:
            problems.append(f"{rel}: changed or damaged (size/checksum differ)")
    return problems


def _remove_empty_dirs(base: Path) -> None:
    """Remove the empty folders under ``base`` and ``base`` itself if it empties, deepest first
    (never following a link)."""
    if base.is_dir():
        for dirpath, _dirs, _files in sorted(os.walk(base, followlinks=False), reverse=True):
            if not os.listdir(dirpath):
                os.rmdir(dirpath)

//! Files that behave: every output is written atomically, with the user's umask, through
//! symbolic links rather than over them; a set of outputs can be staged and moved into place
//! together.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Links followed before a chain is taken for a loop (Linux's own limit).
const MAX_LINKS: usize = 40;

/// Prefix of the staging folders a [`Staging`] creates, followed by the process id.
pub const STAGING_PREFIX: &str = ".staging-";

/// The file a write to `path` lands in: `path` itself, or, when `path` is a symbolic link,
/// the end of its chain of links (a relative target is read from its link's folder). The
/// end need not exist yet: a dangling link is written through, creating its target.
pub fn resolve_links(path: &Path) -> Result<PathBuf> {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = fs::read_link(&current).map_err(|e| Error::io(&current, e))?;
                current = match current.parent() {
                    Some(dir) => dir.join(target),
                    None => target,
                };
            }
            _ => return Ok(current),
        }
    }
    Err(Error::io(
        path,
        std::io::Error::other("too many levels of symbolic links"),
    ))
}

fn folder_of(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

/// A temporary file in `dir` created with mode 0666, which the kernel narrows by the umask
/// exactly as it does for any new file (`0666 & !umask`: 0644 under umask 022).
fn temporary_in(dir: &Path) -> std::io::Result<tempfile::NamedTempFile> {
    let mut builder = tempfile::Builder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(fs::Permissions::from_mode(0o666));
    }
    builder.tempfile_in(dir)
}

/// Writes a file atomically: a temporary file in the folder of the file written, then a
/// rename, so that a failed or killed run leaves either the old contents or the new, never a
/// partial file; an existing FIFO or device is written into instead. When `path` is a symbolic link its target is written (in the target's
/// folder) and the link is kept. The new file has the mode `0666 & !umask`. Errors name
/// `path`, never the temporary file.
pub fn write_atomic(path: &Path, contents: &[u8]) -> Result<()> {
    let target = resolve_links(path)?;
    if fs::metadata(&target).is_ok_and(|meta| !meta.is_file()) {
        // A FIFO or a device (`/dev/null`, `/dev/stdout`) is written into, never replaced.
        return fs::OpenOptions::new()
            .write(true)
            .open(&target)
            .and_then(|mut file| file.write_all(contents))
            .map_err(|e| Error::io(path, e));
    }
    let dir = folder_of(&target);
    let mut file = temporary_in(dir).map_err(|e| Error::io(path, e))?;
    // Through the plain file: the temporary file's own writer names itself in its errors.
    let written = file.as_file_mut().write_all(contents);
    written.map_err(|e| Error::io(path, e))?;
    file.as_file().sync_all().map_err(|e| Error::io(path, e))?;
    file.persist(&target)
        .map_err(|e| Error::io(path, e.error))?;
    Ok(())
}

/// A set of files written into a hidden folder inside their destination folder
/// (`<destination>/.staging-<pid>`) and moved into place together by [`Staging::commit`].
///
/// Guarantee: until `commit` starts, the destination holds exactly its old files, whatever
/// happens to the run (an error, a panic, a kill); `commit` then renames the staged files one
/// by one, each rename atomic, so the only moment at which the destination holds some old
/// files and some new is during those renames (microseconds each: no data is copied, except
/// through a symbolic link whose target lies in another folder, written as [`write_atomic`]
/// does). The staging folder is removed when the `Staging` is dropped; one left by a killed
/// run is removed by the next `Staging` of the same destination.
#[derive(Debug)]
pub struct Staging {
    folder: PathBuf,
    destination: PathBuf,
    names: Vec<String>,
}

impl Staging {
    /// Creates `destination` if needed, and an empty staging folder inside it.
    pub fn new(destination: &Path) -> Result<Self> {
        fs::create_dir_all(destination).map_err(|e| Error::io(destination, e))?;
        remove_leftovers(destination)?;
        let folder = destination.join(format!("{STAGING_PREFIX}{}", std::process::id()));
        fs::create_dir(&folder).map_err(|e| Error::io(&folder, e))?;
        crate::signals::remove_on_signal(&folder);
        Ok(Staging {
            folder,
            destination: destination.to_path_buf(),
            names: Vec::new(),
        })
    }

    /// The staged path of the file `name` of the destination (`folder/file` for one in a
    /// folder of it, created as needed), which `commit` will move into place; the caller
    /// writes it (with [`write_atomic`] or anything else).
    pub fn path(&mut self, name: &str) -> PathBuf {
        if !self.names.iter().any(|n| n == name) {
            self.names.push(name.to_string());
        }
        let path = self.folder.join(name);
        if let Some(parent) = path.parent() {
            // A folder that cannot be made fails the write that follows, naming the file.
            let _ = fs::create_dir_all(parent);
        }
        path
    }

    /// The names staged so far, in the order they were first named.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The contents of the staged file `name`, if one was staged and written.
    pub fn read(&self, name: &str) -> Option<Vec<u8>> {
        self.names
            .iter()
            .any(|n| n == name)
            .then(|| fs::read(self.folder.join(name)).ok())
            .flatten()
    }

    /// Writes the staged file `name`; an error names the destination's file, not the staged one.
    pub fn write(&mut self, name: &str, contents: &[u8]) -> Result<()> {
        let path = self.path(name);
        write_atomic(&path, contents).map_err(|e| self.named(name, e))
    }

    /// `error` naming the destination's file `name` where it named the staged one.
    pub fn named(&self, name: &str, error: Error) -> Error {
        match error {
            Error::Io { source, .. } => Error::io(self.destination.join(name), source),
            other => other,
        }
    }

    /// Moves every staged file into the destination, in the order they were first named.
    pub fn commit(self) -> Result<()> {
        for name in &self.names {
            let staged = self.folder.join(name);
            let destination = self.destination.join(name);
            if let Some(parent) = destination.parent() {
                fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
            }
            if resolve_links(&destination)? == destination {
                fs::rename(&staged, &destination).map_err(|e| Error::io(&destination, e))?;
            } else {
                let contents = fs::read(&staged).map_err(|e| Error::io(&staged, e))?;
                write_atomic(&destination, &contents)?;
            }
        }
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        // Nothing to report: a folder that cannot be removed is removed by the next run.
        let _ = fs::remove_dir_all(&self.folder);
        crate::signals::keep(&self.folder);
    }
}

/// The name of the lock file a [`FolderLock`] holds in its folder (ignored by git).
pub const LOCK_NAME: &str = ".reproduce.lock";

/// An exclusive lock on a results folder for the whole of a run, so that two runs never mix
/// their files: `flock(2)` on [`LOCK_NAME`], which holds the holder's process id and is
/// removed when the lock is dropped. The kernel releases the lock when the process ends,
/// however it ends; a file left by a killed run is simply taken by the next.
#[derive(Debug)]
pub struct FolderLock {
    path: PathBuf,
    _file: fs::File,
}

impl FolderLock {
    /// Takes the lock of `folder` (created if needed), or refuses, naming parameter `flag`
    /// and the process that holds it.
    pub fn take(flag: &'static str, folder: &Path) -> Result<Self> {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::MetadataExt;
        fs::create_dir_all(folder).map_err(|e| Error::io(folder, e))?;
        let path = folder.join(LOCK_NAME);
        loop {
            let mut file = fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .map_err(|e| Error::io(&path, e))?;
            // SAFETY: flock(2) on a descriptor this function owns; no pointers.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
                let holder = fs::read_to_string(&path).unwrap_or_default();
                return Err(Error::invalid(
                    flag,
                    folder.display(),
                    format!("another run (process {}) is writing it", holder.trim()),
                    "one run at a time per results folder: wait for it, or give another folder",
                ));
            }
            // A holder that removed the file between our open and our lock: lock the new one.
            let same = match (file.metadata(), fs::metadata(&path)) {
                (Ok(ours), Ok(named)) => ours.ino() == named.ino() && ours.dev() == named.dev(),
                _ => false,
            };
            if !same {
                continue;
            }
            file.set_len(0).map_err(|e| Error::io(&path, e))?;
            write!(file, "{}", std::process::id()).map_err(|e| Error::io(&path, e))?;
            crate::signals::remove_on_signal(&path);
            return Ok(FolderLock { path, _file: file });
        }
    }
}

impl Drop for FolderLock {
    fn drop(&mut self) {
        // Removed while still locked, so that no run can lock this file after it.
        let _ = fs::remove_file(&self.path);
        crate::signals::keep(&self.path);
    }
}

/// True for the staging folder of a run that no longer exists: this process's own id (left
/// by an earlier process that had it), or, where `/proc` tells, an id no process has.
fn is_leftover(name: &str) -> bool {
    let Some(pid) = name
        .strip_prefix(STAGING_PREFIX)
        .and_then(|pid| pid.parse::<u32>().ok())
    else {
        return false;
    };
    pid == std::process::id()
        || (Path::new("/proc/self").exists() && !Path::new("/proc").join(pid.to_string()).exists())
}

fn remove_leftovers(destination: &Path) -> Result<()> {
    let entries = fs::read_dir(destination).map_err(|e| Error::io(destination, e))?;
    for entry in entries.flatten() {
        if entry.file_name().to_str().is_some_and(is_leftover) {
            let path = entry.path();
            fs::remove_dir_all(&path).map_err(|e| Error::io(&path, e))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_leftover_of_this_process_id_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let leftover = dir
            .path()
            .join(format!("{STAGING_PREFIX}{}", std::process::id()));
        fs::create_dir(&leftover).unwrap();
        fs::write(leftover.join("half.csv"), "half").unwrap();
        let staging = Staging::new(dir.path()).unwrap();
        assert!(!staging.folder.join("half.csv").exists());
    }
}

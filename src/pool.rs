//! Long work on the thread pool, and the interrupt that stops it.
//!
//! - The interrupt flag: set once by the interrupt handler
//!   ([`crate::publish::on_interrupt`], after Ctrl-C / SIGTERM); long work
//!   asks [`check_interrupted`] between steps and stops with
//!   `ErrorKind::Interrupted`.
//! - [`in_order_on_pool`]: work on rayon's pool a group at a time
//!   ([`POOL_GROUP`]) with results handed on in item order (`build`,
//!   `verify`, `unpack`, `extract`, files written into an output folder).
//!
//! A leaf: it uses only `error`, so `build`, `extract` and `iostore` run
//! their work here without reaching for the module that publishes files.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::{Error, ErrorKind, Result};

/// Set by the interrupt handler; long work checks it between steps.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Marks the process interrupted: every later [`check_interrupted`] fails.
/// For the interrupt handler only, which then cleans up and exits.
pub(crate) fn set_interrupted() {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// An error if the user asked zenpak to stop (Ctrl-C / SIGTERM): call
/// between steps of long work.
pub(crate) fn check_interrupted() -> Result<()> {
    if INTERRUPTED.load(Ordering::SeqCst) {
        Err(Error::new(ErrorKind::Interrupted))
    } else {
        Ok(())
    }
}

/// How many items [`in_order_on_pool`] gives the pool at once. The pool's
/// threads meet at the end of each group and wait for its slowest item, so
/// groups are large enough for item costs to even out (`unpack`'s files
/// differ in size by orders of magnitude), and small enough that two
/// groups' results are a few MiB.
pub(crate) const POOL_GROUP: usize = 256;

/// Runs `work` for every item on the thread pool a group at a time
/// ([`POOL_GROUP`]) and hands each result to `then`, on one thread, in
/// item order: what comes out is in the order one thread would give it,
/// whatever the pool's timing. A group's results go to `then` while the pool
/// works on the next group, so memory holds two groups' results. An
/// interrupt (looked at before each group is handed over) or an error from
/// `then` stops it: no group after the one being worked on then starts.
pub(crate) fn in_order_on_pool<T: Sync, R: Send>(
    items: &[T],
    work: impl Fn(&T) -> R + Sync,
    mut then: impl FnMut(&T, R) -> Result<()> + Send,
) -> Result<()> {
    use rayon::prelude::*;
    let work_on = |group: &'_ [T]| -> Vec<R> { group.par_iter().map(&work).collect() };
    let mut groups = items.chunks(POOL_GROUP);
    let mut current = groups.next().map(|group| (group, work_on(group)));
    while let Some((group, results)) = current {
        check_interrupted()?;
        let next = groups.next();
        let (worked, handed) = rayon::join(
            || next.map(|group| (group, work_on(group))),
            || {
                group
                    .iter()
                    .zip(results)
                    .try_for_each(|(item, result)| then(item, result))
            },
        );
        handed?;
        current = worked;
    }
    Ok(())
}

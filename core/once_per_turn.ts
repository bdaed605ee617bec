/**
 * Work gathered during a turn of the event loop and done once at its end: the function returned
 * runs `run` in a microtask after the turn's synchronous code, however often it is called before
 * then (a flush of everything queued meanwhile: quota rounds, the request log's writes).
 */
export function oncePerTurn(run: () => void): () => void {
  let scheduled = false;
  return () => {
    if (scheduled) return;
    scheduled = true;
    queueMicrotask(() => {
      scheduled = false;
      run();
    });
  };
}

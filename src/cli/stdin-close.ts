/**
 * Calls `then` once stdin ends (`--exit-on-stdin-close`): the program that started this one holds
 * the other end of the pipe, which the system closes when that program ends, however it ends. What
 * comes through stdin is read and dropped.
 */
export function onStdinClose(then: () => void): void {
  let called = false;
  const once = () => {
    if (called) return;
    called = true;
    then();
  };
  process.stdin.on("end", once);
  process.stdin.on("close", once);
  process.stdin.on("error", once);
  process.stdin.resume();
}

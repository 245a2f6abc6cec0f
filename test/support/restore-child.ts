// A process that copies a state image into a --db file (what a restore or --import does) and
// says on stdout each turn of the event loop the copy lets go ("turn N"), then "done"; it stays
// until it is killed. test/reliability/restore-kill.test.ts kills it at chosen points.
import { openDb } from "../../src/store/db.js";
import { copyImage } from "../../src/store/image-copy.js";
import { openSqlite } from "../../src/store/sqlite.js";

const [file, image] = process.argv.slice(2) as [string, string];
const to = openDb(file);
const from = openSqlite(image);
let turn = 0;
let copying = true;
const tick = () => {
  if (!copying) return;
  process.stdout.write(`turn ${++turn}\n`);
  setImmediate(tick);
};
setImmediate(tick);
await copyImage(from, to);
copying = false;
process.stdout.write("done\n");
setInterval(() => {}, 60_000);

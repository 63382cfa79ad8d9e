// A reader that holds a read transaction open, as Litestream, a long report query or a forgotten
// `sqlite3` shell does: BEGIN plus a SELECT left unfinished. Commands on stdin, one per line:
// `hold` opens the transaction (answers "holding"), `release` ends it (answers "released").
import { createInterface } from 'node:readline';
import { Database } from '../../dist/src/db/sqlite.js';

const [path] = process.argv.slice(2);
const db = new Database(path, { readonly: true, fileMustExist: true });
let open;
createInterface({ input: process.stdin }).on('line', (line) => {
  if (line === 'hold' && open === undefined) {
    db.exec('BEGIN');
    open = db.prepare('SELECT id FROM threats').iterate();
    open.next();
    process.stdout.write('holding\n');
  } else if (line === 'release' && open !== undefined) {
    open.return();
    db.exec('COMMIT');
    open = undefined;
    process.stdout.write('released\n');
  }
}).on('close', () => db.close());

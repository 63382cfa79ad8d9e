// A child of bench:listeners: holds COUNT TCP connections to the DNS port from SOURCE (outside the
// allow list), each sending one byte of a query every 20 s (a message that never completes), and
// opens a new one at once whenever the primary closes one: an attacker that means to keep every
// place. Prints how many connections it opened when told to stop (SIGTERM).
import { connect, type Socket } from 'node:net';

const [port, source, count] = [Number(process.argv[2]), process.argv[3] ?? '127.0.0.9', Number(process.argv[4] ?? 70)];
let opened = 0;
let stopping = false;
const open = new Set<Socket>();

function hold(): void {
  if (stopping) return;
  opened += 1;
  const socket = connect({ host: '127.0.0.1', port, localAddress: source });
  open.add(socket);
  const timer = setInterval(() => socket.write(Buffer.from([0x40])), 20_000);
  socket.on('connect', () => socket.write(Buffer.from([0x00])));
  socket.on('error', () => undefined);
  socket.on('close', () => {
    clearInterval(timer);
    open.delete(socket);
    // Again, at once (a pause when refused outright, so the loop does not spin).
    setTimeout(hold, 10);
  });
}

for (let index = 0; index < count; index += 1) hold();
process.on('SIGTERM', () => {
  stopping = true;
  const heldAtEnd = open.size;
  for (const socket of open) socket.destroy();
  process.stdout.write(`${JSON.stringify({ opened, heldAtEnd })}\n`);
  process.exit(0);
});

// autocannon in a process of its own: a load whose client work (hundreds of large answers a
// second) must not share an event loop with the client whose latency is being measured.
// Receives autocannon's options over IPC and sends back its result.
import autocannon from 'autocannon';

process.once('message', (opts) => {
  autocannon(opts, (err, result) => {
    process.send(err ? { error: String(err) } : { result }, () => process.exit(0));
  });
});

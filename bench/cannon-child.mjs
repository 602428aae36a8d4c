// autocannon in a process of its own: a load whose client work (hundreds of large answers a
// second) must not share an event loop with the client whose latency is being measured.
// Receives autocannon's options over IPC and sends back its result.
import autocannon from 'autocannon';

process.once('message', (opts) => {
  const before = process.cpuUsage();
  autocannon(opts, (err, result) => {
    const used = process.cpuUsage(before);
    // The CPU the load took (ms), for benchmarks that share the machine with it.
    const cpuMs = (used.user + used.system) / 1000;
    process.send(err ? { error: String(err) } : { result, cpuMs }, () => process.exit(0));
  });
});

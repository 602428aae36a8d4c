#!/usr/bin/env node
// The `storemap` command. The service is TypeScript run through tsx, so there is no separate
// compile step between `npm install` and `npm start`.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../ts/cli.ts');
await main(process.argv);

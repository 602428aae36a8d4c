// The prebuilt npm package's entry point (bin/storemap.cjs, bundled by scripts/release.ts): the
// service's modules find the package's files from the bundle's own place, as a checkout's find
// them from ts/. The addon and the pipeline binary come from the platform package
// (@storemap/native-linux-x64-gnu), so installing runs no compiler.
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const globals = globalThis as { __storemapModuleUrl?: string; __storemapPackage?: boolean };
// The bundle's `import.meta.url` (esbuild's define): a file one folder below the package root.
globals.__storemapModuleUrl = pathToFileURL(path.join(__dirname, '..', 'ts', 'storemap.cjs')).href;
// Installed: the data folder defaults to ./storemap-data, not a folder inside node_modules.
globals.__storemapPackage = true;

// Loaded only now: the service's modules read ROOT when they are evaluated.
void import('../cli.ts').then(({ main }) => main(process.argv));

// The single executable's suite (test/release/), run by scripts/test.sh after `npm run release`:
// apart from the main suite, which runs before the release exists.
import pkg from './package.json' with { type: 'json' };

export default { ...pkg.ava, files: ['test/release/**/*.test.ts'], timeout: '10m' };

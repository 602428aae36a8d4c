// One real request through the TypeScript client openapi-generator's typescript-fetch builds
// from /api/openapi.yaml (scripts/client-test.sh copies this file into the generated client):
// the brand directory, then location-map and the store-count history with the key.
import { BrandsApi, Configuration, LocationsApi } from './index';

async function main(): Promise<void> {
  const [base, key] = process.argv.slice(2);
  const config = new Configuration({ basePath: base, apiKey: key });
  const page = await new BrandsApi(config).listBrands({ q: 'star', limit: 5 });
  const map = await new LocationsApi(config).locationMap({ locationMapRequest: { brand: 'Starbucks', country: 'US', format: 'json' } });
  if (!(page.total > 0 && map.count > 0 && map.locations.length === map.count && map.brand === 'Starbucks')) {
    throw new Error(`unexpected answer: ${JSON.stringify(map).slice(0, 300)}`);
  }
  const history = await new LocationsApi(config).history({ ticker: 'SBUX', country: 'US' });
  const last = history.series[history.series.length - 1];
  if (!(history.brand === 'Starbucks' && last.stores === map.count)) {
    throw new Error(`unexpected history: ${JSON.stringify(history).slice(0, 300)}`);
  }
  console.log(`typescript-fetch client: ${page.total} brands match "star"; ${map.count} US Starbucks, the first at ${map.locations[0].lat}, ${map.locations[0].lng}; ${last.period}: ${last.stores} stores`);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});

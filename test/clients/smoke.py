"""One real request through the Python client openapi-generator builds from /api/openapi.yaml
(scripts/client-test.sh installs it): the brand directory, then location-map and the store-count
history with the key."""

import sys
import storemap_client as sm

base, key = sys.argv[1], sys.argv[2]
config = sm.Configuration(host=base, api_key={"ApiKey": key})
with sm.ApiClient(config) as client:
    page = sm.BrandsApi(client).list_brands(q="star", limit=5)
    answer = sm.LocationsApi(client).location_map(sm.LocationMapRequest(brand="Starbucks", country="US", format="json"))
    assert answer.count > 0 and len(answer.locations) == answer.count and answer.brand == "Starbucks", answer
    history = sm.LocationsApi(client).history(ticker="SBUX", country="US")
    last = history.series[-1]
    assert history.brand == "Starbucks" and last.stores == answer.count, history
    print(f"python client: {page.total} brands match 'star'; {answer.count} US Starbucks, the first at {answer.locations[0].lat}, {answer.locations[0].lng}; {last.period}: {last.stores} stores")

// The synthetic world's phone numbers against libphonenumber (Google's numbering plans, as
// libphonenumber-js ships them): a number that a phone library calls invalid is what an analyst
// notices at a second look. Read from the test dataset's AllThePlaces files, as a user of the
// raw sources would read them.
import test from 'ava';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js/max';
import { testDataDir } from './helpers/dataset.ts';

interface Feature {
  properties: Record<string, string | undefined>;
}

// Britain's numbers are Ofcom's drama numbers (01632 960xxx, 020 7946 0xxx and the like), kept
// unallocated so that they ring nobody; libphonenumber holds them invalid for that reason.
const UNALLOCATED_BY_DESIGN = new Set(['GB']);

async function atpPhones(): Promise<Map<string, { phone: string; state: string }[]>> {
  const dir = path.join(testDataDir(), 'sources', 'atp');
  const byCountry = new Map<string, { phone: string; state: string }[]>();
  for (const file of await readdir(dir)) {
    const doc = JSON.parse(await readFile(path.join(dir, file), 'utf8')) as { features: Feature[] };
    for (const { properties: p } of doc.features) {
      const country = p['addr:country'];
      const phone = p.phone?.split(';')[0];
      if (!country || !phone) continue;
      const list = byCountry.get(country) ?? [];
      list.push({ phone, state: p['addr:state'] ?? '' });
      byCountry.set(country, list);
    }
  }
  return byCountry;
}

test('every country’s numbers are ones its numbering plan allows', async (t) => {
  const byCountry = await atpPhones();
  let checked = 0;
  for (const [country, rows] of byCountry) {
    if (UNALLOCATED_BY_DESIGN.has(country) || rows.length < 20) continue;
    const invalid = rows.filter(({ phone }) => !parsePhoneNumberFromString(phone, country as CountryCode)?.isValid());
    checked += rows.length;
    // Japan's plan leaves a few local exchanges unallocated inside most areas (Sapporo's 011-4xx
    // among them): 3 % slack.
    t.true(invalid.length <= rows.length * 0.03, `${country}: ${invalid.length} of ${rows.length} invalid, e.g. ${invalid.slice(0, 3).map((r) => r.phone).join(', ')}`);
  }
  t.true(checked >= 5000, `${checked} numbers checked`);
});

test('North American numbers are the fiction range behind a real area code of the store’s own state', async (t) => {
  const byCountry = await atpPhones();
  // Area codes by state, written out from NANPA's plan for the states and provinces with the
  // most stores: a number whose code is another state's was given the wrong town.
  const codes: Record<string, string[]> = {
    CA: ['209', '213', '279', '310', '323', '341', '350', '369', '408', '415', '424', '442', '510', '530', '559', '562', '619', '626', '628', '650', '657', '661', '669', '707', '714', '747', '760', '805', '818', '820', '831', '837', '840', '858', '909', '916', '925', '949', '951'],
    TX: ['210', '214', '254', '281', '325', '346', '361', '409', '430', '432', '469', '512', '682', '713', '726', '737', '806', '817', '830', '832', '903', '915', '936', '940', '945', '956', '972', '979'],
    NY: ['212', '315', '329', '332', '347', '363', '516', '518', '585', '607', '624', '631', '646', '680', '716', '718', '838', '845', '914', '917', '929', '934'],
    FL: ['239', '305', '321', '324', '352', '386', '407', '448', '561', '645', '656', '689', '727', '728', '754', '772', '786', '813', '850', '863', '904', '941', '954'],
    ON: ['226', '249', '289', '343', '365', '382', '416', '437', '519', '548', '613', '647', '683', '705', '742', '753', '807', '905', '942'],
  };
  let checked = 0;
  for (const country of ['US', 'CA']) {
    for (const { phone, state } of byCountry.get(country) ?? []) {
      const m = /^\+1 (\d{3})-555-01\d\d$/.exec(phone);
      t.truthy(m, `${country} ${state}: ${phone}`);
      if (m && codes[state]) {
        checked++;
        t.true(codes[state].includes(m[1]), `${state}: ${phone}`);
      }
    }
  }
  t.true(checked >= 500, `${checked} numbers in the listed states checked`);
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { TrackwayError } from '../errors.ts';
import {
  hashUserData,
  isSha256Hex,
  normaliseUserDataField,
  sha256Hex,
  type UserData,
} from '../events/user-data.ts';
import {
  type PlatformHashes,
  type PlatformLocation,
  platformUserData,
} from './platform-user-data.ts';
import { normaliseE164, normaliseGa4Email } from './platforms/ga4/user-data.ts';

// Hashes are written out literally so that a change in normalisation fails here.
// Meta: "Customer Information Parameters" (developers.facebook.com/docs/marketing-api/
// conversions-api/parameters/customer-information-parameters): john_smith@gmail.com,
// (650)555-1212 → 16505551212, Valéry → valéry.
const META_EMAIL = '62a14e44f765419d10fea99367361a727c12365e2520f32218d505ed9aa0f62f';
const META_PHONE = 'e323ec626319ca94ee8bff2e4c87cf613be6ea19919ed1364124e16807ab3176';
const META_VALERY = '08e1996b5dd49e62a4b4c010d44e4345592a863bb9f8e3976219bac29417149c';
const JOHN = '96d9632f363564cc3032521409cf22a852f2032eec099ed5967c0d000cec607a';
const SMITH = '6627835f988e2c5e50533d491163072d3f4f41f5c8b04630150debb3722ca2dd';
// Google publishes normalised forms, not hashes (developers.google.com/analytics/devguides/
// collection/ga4/uid-data; developers.google.com/data-manager/api/devguides/concepts/formatting):
// (800)555-0100 → +18005550100; dots before @ removed for gmail.com and googlemail.com only.
const SHA_PLUS_18005550100 = 'fb4f73a6ec5fdb7077d564cdd22c3554b43ce49168550c3b12c547b78c517b30';
const SHA_PLUS_16505551212 = '1e231c66011e7a2d867a9cfae267a6aff103cf4913640b6e71a99850fc0ffbc8';
const SHA_JANEDOE_GMAIL = 'd6117306485ed0e50afab3ac871e98f81699151f30281527d63ff5f233656c69';
const SHA_JANE_DOT_DOE_EXAMPLE = '86e0b9e56c17cc4d12387e1949b85053fbe73bc3ce5a1188713a9d300cc6133d';
const SHA_MARYJANE = 'f08f448a5e7a9dc3619bb7c129f6a7d5fc6af002cea17ad71dfdc1c68f4d4e0e';
const SHA_MARY_JANE = 'e3a62fcabda79e1b70db99ef77d0e0af36d27e3c48bce714fac085d5058d945a';
const SHA_SW1A1AA = '830e1d4b9838bab1f5c2acdb23e0b502ff13a9832c4632e8d67a1d43d3b7f614';

describe('per-platform user_data at ingestion', () => {
  it("gives Meta Trackway's own hashes (Meta's published vectors) under Meta's names", () => {
    const { hashes } = platformUserData({
      email: ' John_Smith@gmail.com ',
      phone: '+1 (650) 555-1212',
      first_name: 'John',
      last_name: 'Smith',
      external_id: 'user-42',
    });
    assert.deepEqual(hashes['meta']!, {
      em: META_EMAIL,
      ph: META_PHONE,
      fn: JOHN,
      ln: SMITH,
      external_id: sha256Hex('user-42'),
    });
    assert.equal(platformUserData({ first_name: 'Valéry' }).hashes['meta']!.fn, META_VALERY);
  });

  it("follows Google's rules for GA4: gmail dots, E.164 with +, names without digits", () => {
    assert.equal(normaliseGa4Email(' Jane.Doe@GMAIL.com'), 'janedoe@gmail.com');
    assert.equal(normaliseGa4Email('jane.doe@googlemail.com'), 'janedoe@googlemail.com');
    assert.equal(normaliseGa4Email('jane.doe@example.com'), 'jane.doe@example.com');
    assert.equal(normaliseE164('+1 (800) 555-0100'), '+18005550100');
    const { hashes, location } = platformUserData({
      email: 'Jane.Doe@gmail.com',
      phone: '+1 (800) 555-0100',
      first_name: ' Mary-Jane2 ',
      last_name: 'Smith',
      city: 'St. Louis 2',
      state: 'MO',
      zip: 'SW1A 1AA',
      country: 'US',
      external_id: 'user-42',
    });
    assert.deepEqual(hashes['ga4']!, {
      sha256_email_address: SHA_JANEDOE_GMAIL,
      sha256_phone_number: SHA_PLUS_18005550100,
      sha256_first_name: SHA_MARYJANE,
      sha256_last_name: SMITH,
      user_id: sha256Hex('user-42'),
    });
    // Unhashed, as GA4 wants them; the zip is raw contact data Trackway never keeps (§11).
    assert.deepEqual(location['ga4']!, { city: 'st louis', region: 'mo', country: 'us' });
    // Meta keeps the dots: its rule is trim + lowercase only.
    assert.equal(
      platformUserData({ email: 'jane.doe@example.com' }).hashes['ga4']!.sha256_email_address,
      SHA_JANE_DOT_DOE_EXAMPLE,
    );
  });

  it("follows TikTok's: +digits phone, hashed names and zip, unhashed city/state/country", () => {
    const { hashes, location } = platformUserData({
      email: ' John_Smith@gmail.com ',
      phone: '+1 650 555 1212',
      first_name: 'Mary Jane',
      last_name: "O'Neil",
      zip: 'SW1A 1AA',
      city: 'New York',
      state: 'NY',
      country: 'US',
      external_id: 'user-42',
    });
    assert.deepEqual(hashes['tiktok']!, {
      email: META_EMAIL,
      phone: SHA_PLUS_16505551212,
      external_id: sha256Hex('user-42'),
      first_name: SHA_MARYJANE,
      last_name: sha256Hex('oneil'),
      zip_code: SHA_SW1A1AA,
    });
    assert.deepEqual(location['tiktok']!, { city: 'newyork', state: 'ny', country: 'us' });
    // Meta folds inner spaces to one; TikTok removes them.
    assert.equal(platformUserData({ first_name: 'Mary Jane' }).hashes['meta']!.fn, SHA_MARY_JANE);
  });

  it('passes pre-hashed values to hashed fields only, and never keeps raw contact data', () => {
    const hashed = sha256Hex('someone@example.com');
    const { hashes, location } = platformUserData({ email: hashed, city: sha256Hex('paris') });
    assert.equal(hashes['meta']!.em, hashed);
    assert.equal(hashes['ga4']!.sha256_email_address, hashed);
    assert.equal(hashes['tiktok']!.email, hashed);
    assert.deepEqual(location, { ga4: {}, tiktok: {} });
    const kept = platformUserData({
      email: 'jane@example.com',
      phone: '+18005550100',
      zip: '94107',
    });
    // Google Ads takes an address's postal code unhashed: a location, kept with the 7-day keys.
    assert.deepEqual(kept.location['google_ads'], { postal_code: '94107' });
    const all = JSON.stringify({ ...kept, location: { ...kept.location, google_ads: null } });
    for (const raw of ['jane@example.com', '18005550100', '94107']) assert.ok(!all.includes(raw));
  });

  it('refuses what no platform could use, with the track route’s error', () => {
    assert.throws(
      () => platformUserData({ phone: '650 555 1212' }),
      (error) => error instanceof TrackwayError && error.field === 'user_data.phone',
    );
  });
});

/**
 * The implementation before issue 21 (each platform normalised and hashed every value anew),
 * kept as the reference the faster one must agree with on any input.
 */
function referencePlatformUserData(raw: UserData): {
  hashes: PlatformHashes;
  location: PlatformLocation;
} {
  const own = hashUserData(raw);
  const hashOrPass = (value: string | undefined, normalise: (raw: string) => string) => {
    if (value === undefined) return undefined;
    if (isSha256Hex(value)) return value;
    const normalised = normalise(value);
    return normalised === '' ? undefined : sha256Hex(normalised);
  };
  const plain = (value: string | undefined, normalise: (raw: string) => string) => {
    if (value === undefined || isSha256Hex(value)) return undefined;
    const normalised = normalise(value);
    return normalised === '' ? undefined : normalised;
  };
  const compact = (value: Record<string, string | undefined>): Record<string, string> => {
    for (const key of Object.keys(value)) {
      if (value[key] === undefined) delete value[key];
    }
    return value as Record<string, string>;
  };
  const ga4Text = (v: string) =>
    v
      .toLowerCase()
      .replace(/[\p{N}\p{P}\p{S}]/gu, '')
      .replace(/\s+/g, ' ')
      .trim();
  const tiktokName = (v: string) =>
    v
      .toLowerCase()
      .replace(/[\p{P}\p{S}]/gu, '')
      .replace(/\s+/g, '');
  const country = (value: string) => normaliseUserDataField('country', value, {});
  const meta = compact({
    em: own.email,
    ph: own.phone,
    fn: own.first_name,
    ln: own.last_name,
    ct: own.city,
    st: own.state,
    zp: own.zip,
    country: own.country,
    external_id: own.external_id,
  });
  return {
    hashes: {
      meta,
      ga4: compact({
        sha256_email_address: hashOrPass(raw.email, normaliseGa4Email),
        sha256_phone_number: hashOrPass(raw.phone, normaliseE164),
        sha256_first_name: hashOrPass(raw.first_name, ga4Text),
        sha256_last_name: hashOrPass(raw.last_name, ga4Text),
        user_id: meta.external_id,
      }),
      tiktok: compact({
        email: meta.em,
        phone: hashOrPass(raw.phone, normaliseE164),
        external_id: meta.external_id,
        first_name: hashOrPass(raw.first_name, tiktokName),
        last_name: hashOrPass(raw.last_name, tiktokName),
        zip_code: hashOrPass(raw.zip, (zip) => zip.toLowerCase().replace(/\s+/g, '')),
      }),
    },
    location: {
      ga4: compact({
        city: plain(raw.city, ga4Text),
        region: plain(raw.state, ga4Text),
        country: plain(raw.country, country),
      }),
      tiktok: compact({
        city: plain(raw.city, (city) => normaliseUserDataField('city', city, {})),
        // A state named in full becomes its code only for a US, Canadian or unknown country
        // (a pre-hashed one is unknown), as the record's own normalisation does.
        state: plain(raw.state, (state) =>
          normaliseUserDataField(
            'state',
            state,
            raw.country !== undefined && !isSha256Hex(raw.country) ? { country: raw.country } : {},
          ),
        ),
        country: plain(raw.country, country),
      }),
    },
  };
}

/** The reference is the first three platforms' code: later platforms are tested in their folders. */
function firstThree(data: ReturnType<typeof platformUserData>) {
  const pick = (byPlatform: Readonly<Record<string, unknown>> | null | undefined) =>
    byPlatform &&
    Object.fromEntries(
      Object.entries(byPlatform).filter(([type]) => ['meta', 'ga4', 'tiktok'].includes(type)),
    );
  return { ...data, hashes: pick(data.hashes), location: pick(data.location) };
}

function outcome(run: () => unknown): unknown {
  try {
    return { value: JSON.stringify(run()) };
  } catch (error) {
    return { error: (error as TrackwayError).message };
  }
}

describe('per-platform user_data, each value normalised and hashed once (issue 21)', () => {
  const text = fc.oneof(
    fc.string({ maxLength: 12 }),
    fc.constantFrom(
      ' Jane.Doe@GMail.com ',
      'a.b@googlemail.com',
      'x@example.com',
      '@x',
      '+1 (650) 555-0199',
      '+44 20 7946 0958',
      '650 555 1212',
      'Mary  Jane',
      "O'Neil 3rd",
      'SW1A 1AA',
      '94107-1234',
      'US',
      ' gb ',
      'zz',
      'New York',
      '',
      '  ',
      '!!',
    ),
    fc.constant(sha256Hex('someone')),
  );
  const userData = fc.record(
    {
      email: text,
      phone: text,
      first_name: text,
      last_name: text,
      city: text,
      state: text,
      zip: text,
      country: text,
      external_id: text,
    },
    { requiredKeys: [] },
  );

  it('gives exactly what the per-platform implementation gave, errors included', () => {
    fc.assert(
      fc.property(userData, (raw) => {
        assert.deepEqual(
          outcome(() => firstThree(platformUserData(raw))),
          outcome(() => referencePlatformUserData(raw)),
        );
      }),
      { numRuns: 3_000 },
    );
  });
});

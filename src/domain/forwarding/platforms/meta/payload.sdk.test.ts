/**
 * Cross-check against Meta's official Node SDK (facebook-nodejs-business-sdk): the same event
 * built with ServerEvent/UserData/CustomData, and `normalize()`d, must equal our payload, except
 * where Trackway differs on purpose — each difference is asserted and explained below.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import sdk from 'facebook-nodejs-business-sdk';
import { forwardable, UA } from '../../../../../test/platforms/forwardable.ts';
import { sha256Hex } from '../../../events/user-data.ts';
import { meta as metaModule } from './index.ts';

const FBC = 'fb.1.1554763741205.AbCdEfGhIjKlMnOp';
const FBP = 'fb.1.1558571054389.1098115397';

describe("Meta payload against Meta's official SDK", () => {
  it('matches ServerEvent.normalize() field for field, but for the deliberate differences', () => {
    const now = new Date();
    const timestamp = new Date(now.getTime() - 60_000);
    const raw = {
      email: ' John_Smith@Gmail.com ',
      phone: '+1 (650) 555-1212',
      first_name: 'Mary-Jane',
      last_name: "O'Neil",
      city: 'St. Louis',
      state: 'MO',
      zip: '63101-1234',
      country: 'US',
      external_id: 'user-42',
    };
    const ours = forwardable({
      event: { timestamp, searchString: 'red shoes', customData: { order_ref: 'A-1' } },
      userData: raw,
      matchKeys: { clientIpAddress: '203.0.113.7', clientUserAgent: UA, fbc: FBC, fbp: FBP },
    });
    const payload = metaModule.build([ours], { pixel_id: '1', access_token: 't' }, { now })
      .requests[0]!.body['data'] as Array<Record<string, unknown>>;

    const userData = new sdk.UserData()
      .setEmail(raw.email)
      .setPhone(raw.phone)
      .setFirstName(raw.first_name)
      .setLastName(raw.last_name)
      .setCity(raw.city)
      .setState(raw.state)
      .setZip(raw.zip)
      .setCountry(raw.country)
      .setExternalId(raw.external_id)
      .setClientIpAddress('203.0.113.7')
      .setClientUserAgent(UA)
      .setFbc(FBC)
      .setFbp(FBP);
    const customData = new sdk.CustomData()
      .setValue(49.9)
      .setCurrency('EUR')
      .setSearchString('red shoes')
      .setCustomProperties({ order_ref: 'A-1' });
    const theirs = new sdk.ServerEvent()
      .setEventName('Purchase')
      .setEventTime(Math.floor(timestamp.getTime() / 1000))
      .setEventId(ours.event.eventId)
      .setEventSourceUrl('https://shop.example/checkout/done')
      .setActionSource('website')
      .setUserData(userData)
      .setCustomData(customData)
      .normalize();

    const mine = structuredClone(payload[0]!);
    const sdkUserData = theirs['user_data'] as Record<string, unknown>;
    const myUserData = mine['user_data'] as Record<string, unknown>;

    // 1. Names: Meta's documentation says fn/ln are "lowercase only with no punctuation"; the
    //    SDK only trims and lower-cases, so it hashes "mary-jane" and "o'neil". We follow the
    //    documentation (hashes of "maryjane" and "oneil"), which is what Meta's matching expects.
    assert.deepEqual(sdkUserData['fn'], [sha256Hex('mary-jane')]);
    assert.deepEqual(myUserData['fn'], [sha256Hex('maryjane')]);
    assert.deepEqual(sdkUserData['ln'], [sha256Hex("o'neil")]);
    assert.deepEqual(myUserData['ln'], [sha256Hex('oneil')]);
    // 2. external_id: the SDK sends it raw; Meta recommends hashing it, and Trackway never keeps
    //    a raw customer id (contract §11), so we send its SHA-256.
    assert.deepEqual(sdkUserData['external_id'], ['user-42']);
    assert.deepEqual(myUserData['external_id'], [sha256Hex('user-42')]);
    for (const key of ['fn', 'ln', 'external_id']) {
      delete sdkUserData[key];
      delete myUserData[key];
    }

    // Everything else is identical: em, ph, ct, st, zp, country hashes, the unhashed ip, user
    // agent, fbc and fbp, event_time in seconds, custom_data with value, currency,
    // search_string and the caller's keys.
    assert.deepEqual(mine, theirs);
  });
});

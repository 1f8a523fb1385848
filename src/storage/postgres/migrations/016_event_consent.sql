-- The visitor's consent as the caller sent it (contract §16: `{ad_user_data, ad_personalization,
-- limited_data_use}`), JSON; null when none was given. It is part of the record and decides,
-- per destination, what forwarding may send.
ALTER TABLE events ADD COLUMN consent json;

/**
 * Requests one worker keeps open to one endpoint. Deep enough that a receiver on the same
 * network is kept busy while claims go to the database and back (on PostgreSQL here, 8 gave
 * about 2,000 deliveries/s and 16 about 2,500), and small against the worker's total, so
 * endpoints that hang only take all of it when eight of them do. The sender sizes its socket
 * pool per origin by it, so the worker's cap is the one that binds.
 */
export const PER_ENDPOINT_IN_FLIGHT = 16;

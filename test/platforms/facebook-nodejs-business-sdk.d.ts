// The parts of Meta's official SDK the cross-check test uses (the package ships no types).
declare module 'facebook-nodejs-business-sdk' {
  export class UserData {
    setEmail(email: string): UserData;
    setPhone(phone: string): UserData;
    setFirstName(name: string): UserData;
    setLastName(name: string): UserData;
    setCity(city: string): UserData;
    setState(state: string): UserData;
    setZip(zip: string): UserData;
    setCountry(country: string): UserData;
    setExternalId(id: string): UserData;
    setClientIpAddress(ip: string): UserData;
    setClientUserAgent(ua: string): UserData;
    setFbc(fbc: string): UserData;
    setFbp(fbp: string): UserData;
  }
  export class CustomData {
    setValue(value: number): CustomData;
    setCurrency(currency: string): CustomData;
    setSearchString(search: string): CustomData;
    setCustomProperties(properties: Record<string, unknown>): CustomData;
  }
  export class ServerEvent {
    setEventName(name: string): ServerEvent;
    setEventTime(seconds: number): ServerEvent;
    setEventId(id: string): ServerEvent;
    setEventSourceUrl(url: string): ServerEvent;
    setActionSource(source: string): ServerEvent;
    setUserData(userData: UserData): ServerEvent;
    setCustomData(customData: CustomData): ServerEvent;
    normalize(): Record<string, unknown>;
  }
  const sdk: {
    UserData: typeof UserData;
    CustomData: typeof CustomData;
    ServerEvent: typeof ServerEvent;
  };
  export default sdk;
}

/** What one delivery sends: the body, exactly as signed, and its content type. */
export interface Payload {
  contentType: string;
  body: string;
}

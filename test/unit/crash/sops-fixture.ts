/**
 * A Secret manifest encrypted by the real sops (3.13.3) for a test age key, made once with
 *   sops encrypt --age <recipient> --encrypted-regex '^(data|stringData)$' creds.yaml
 * so the unit tier decrypts what sops writes without running it. The key protects nothing else.
 */
export const AGE_IDENTITY = 'AGE-SECRET-KEY-1HF6LLA0H3WE3JYM69WCYU5HNAS782U9UN7FVLTZSKEN0KDEYJG8SPG0JFR';

/** apiVersion v1, kind Secret, name creds, stringData.password "rotated". */
export const ENCRYPTED_CREDS = `apiVersion: v1
kind: Secret
metadata:
    name: creds
type: Opaque
stringData:
    password: ENC[AES256_GCM,data:fcSrUqGiLA==,iv:rH1B1ykYmQPZlg8/nD6OXPJ0NqcXsOawq9wiYACcuzo=,tag:V2s/3JaNUR4GMFj8kVY6bw==,type:str]
sops:
    age:
        - enc: |
            -----BEGIN AGE ENCRYPTED FILE-----
            YWdlLWVuY3J5cHRpb24ub3JnL3YxCi0+IFgyNTUxOSBlWVdITUZRRkpqYUdzS3B5
            ZjhERmxsVGpLM3YwNW1laU5Ec2E2eWIvWFFNCmVVU1ArcTVHZmV0WXhBQ29oemQ1
            NzZBbDQ5VjFxZFErV25zR0N1SVhSL1kKLS0tIEFMbGw4TlovZHcycmZSQUF1UVA5
            b01zSERuWEZNdTB5T0pXaHhmaVJYM28KuL3XoQfywNWV+8wPRaRTAjQ35esGPquD
            VM9UxovAh4yz1p9InmNy8MFSprNDUoyk5iIv3hndrncvg7xW1LoSPQ==
            -----END AGE ENCRYPTED FILE-----
          recipient: age1djw44aq73sxql3xq66et00yt4ztkemtmx7rfu5tmxg09xlf5udms3w5hvr
    encrypted_regex: ^(data|stringData)$
    lastmodified: "2026-11-28T09:16:29Z"
    mac: ENC[AES256_GCM,data:UJRQV8L8mHRr8e3aPvGzW0+C9X9jnsCuaMuPcuodvhKSiP33xex5UjDcV+urPO/D/pFVmPVoySfUcD3g78WlCNZA8J1uGUC21PdYFQCHdVF1p5Ps9pTRo7U4xHQK1YSpDC3QE7PSGddstjUbS12L+FjT+ZAYMpSMj7H8BrShJtA=,iv:HKCf8U+Jf+K9SbLtNjYA4Mo1Uecdfug27Rp10C8ftQU=,tag:9N+Bxk8iTvXYNijG3GHqXQ==,type:str]
    version: 3.13.3
`;

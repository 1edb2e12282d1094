"""A model field whose value is encrypted at rest and in every serialization.

``django-fernet-encrypted-fields`` encrypts a column on its way to the database, but its
fields serialize the decrypted value: ``manage.py dumpdata`` (and any
``django.core.serializers`` call) would write tokens and client secrets in clear.
`SealedTextField` serializes the Fernet ciphertext instead; ``loaddata`` reads it back (the
field decrypts on load with the same ``SECRET_KEY``/``SALT_KEY``, and encrypts again on
save), so a fixture or a backup never holds a secret in clear. Reading the plaintext stays an
explicit call (``Credential.data``).
"""

from __future__ import annotations

from typing import Any

from django.db import models
from encrypted_fields.fields import EncryptedTextField

__all__ = ["SealedTextField"]


class SealedTextField(EncryptedTextField):
    """``EncryptedTextField`` whose serialized form (``value_to_string``) is the ciphertext.

    A dump made under one pair of keys loads under the same keys (or with them kept in
    ``SECRET_KEY_FALLBACKS`` / a ``SALT_KEY`` list); under other keys the value cannot be
    decrypted and ``Credential.data`` raises ``ValueError`` saying so.
    """

    def value_to_string(self, obj: models.Model) -> Any:
        value = self.value_from_object(obj)
        if value is None or value == "":
            return value
        return self.get_prep_value(value)  # Fernet: a fresh ciphertext of the same text

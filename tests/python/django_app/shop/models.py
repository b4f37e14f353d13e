"""The models of the Django scenario (tests/python/test_django.py): a
self-referencing foreign key, many-to-many, JSON, UUID, decimal, an index
with a descending column, CHECK and UNIQUE constraints, unique_together."""

import uuid
from django.db import models
from django.db.models import Q, F

class Category(models.Model):
    name = models.CharField(max_length=100, unique=True)
    parent = models.ForeignKey("self", null=True, blank=True, on_delete=models.CASCADE, related_name="children")

class Tag(models.Model):
    label = models.SlugField(unique=True)

class Product(models.Model):
    sku = models.UUIDField(default=uuid.uuid4, unique=True)
    name = models.CharField(max_length=200, db_index=True)
    price = models.DecimalField(max_digits=10, decimal_places=2)
    stock = models.PositiveIntegerField(default=0)
    category = models.ForeignKey(Category, on_delete=models.PROTECT, related_name="products")
    tags = models.ManyToManyField(Tag, blank=True)
    attrs = models.JSONField(default=dict)
    created = models.DateTimeField(auto_now_add=True)
    active = models.BooleanField(default=True)
    class Meta:
        indexes = [models.Index(fields=["category", "-created"], name="prod_cat_created")]
        constraints = [
            models.CheckConstraint(condition=Q(price__gte=0), name="price_nonneg"),
            models.UniqueConstraint(fields=["category", "name"], name="uniq_cat_name"),
        ]

class Order(models.Model):
    customer = models.CharField(max_length=100)
    placed = models.DateTimeField()
    note = models.TextField(blank=True, default="")

class OrderLine(models.Model):
    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="lines")
    product = models.ForeignKey(Product, on_delete=models.CASCADE)
    qty = models.IntegerField()
    class Meta:
        unique_together = [("order", "product")]
